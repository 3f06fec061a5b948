/**
 * Images and documents in a request, as the fake checks and counts them: the media types the Messages API
 * takes, valid base64 whose bytes are of the type named, an image's base64 at most 5 MB, a PDF at most
 * 100 pages (the 32 MB request limit is the server's 413). Wording: the 5 MB and the media-type-mismatch
 * messages are the real API's; the others are ours where we have no verbatim sample.
 */

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
/** The real limit is on the base64 string. */
export const MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024;
export const MAX_PDF_PAGES = 100;
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** The invalid_request_error message for an image or document block, or undefined when it is fine. */
export function checkMediaBlock(b: Record<string, any>, at: string): string | undefined {
  const kind = b.type as 'image' | 'document';
  const source = b.source;
  if (typeof source !== 'object' || source === null) return `${at}.${kind}.source: Field required`;
  if (source.type === 'url' || source.type === 'file' || (kind === 'document' && source.type === 'content')) return undefined;
  if (kind === 'document' && source.type === 'text') {
    if (source.media_type !== 'text/plain') return `${at}.document.source.text.media_type: Input should be 'text/plain'`;
    if (typeof source.data !== 'string') return `${at}.document.source.text.data: Field required`;
    return undefined;
  }
  if (source.type !== 'base64') return `${at}.${kind}.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags`;
  const allowed = kind === 'image' ? IMAGE_TYPES : ['application/pdf'];
  if (!allowed.includes(source.media_type)) {
    return `${at}.${kind}.source.base64.media_type: Input should be ${allowed.map((t) => `'${t}'`).join(', ').replace(/, ([^,]*)$/, ' or $1')}`;
  }
  const data = source.data;
  if (typeof data !== 'string') return `${at}.${kind}.source.base64.data: Field required`;
  if (kind === 'image' && data.length > MAX_IMAGE_BASE64_BYTES) return `${at}.image.source.base64: image exceeds 5 MB maximum: ${data.length} bytes > ${MAX_IMAGE_BASE64_BYTES} bytes`;
  if (data.length % 4 !== 0 || !BASE64_RE.test(data)) return `${at}.${kind}.source.base64.data: invalid base64 data`; // wording is ours
  const bytes = Buffer.from(data, 'base64');
  const actual = signature(bytes);
  if (actual !== source.media_type) {
    if (kind === 'image') return `${at}.image.source.base64.data: The image was specified using the ${source.media_type} media type, but the image appears to be a ${actual ?? 'unsupported'} image`;
    return `${at}.document.source.base64.data: The PDF specified was not valid.`; // wording is ours
  }
  if (kind === 'document' && pdfPages(bytes) > MAX_PDF_PAGES) return `${at}.document.source.base64.data: A maximum of ${MAX_PDF_PAGES} PDF pages may be provided.`;
  return undefined;
}

/**
 * Tokens of an image or document block: an image w*h/750 from a PNG's header (other formats, or larger
 * ones: 1,600, what a ~1.15 megapixel image costs), a PDF 1,500 a page, a text document by the text tokenizer.
 */
export function mediaBlockTokens(b: Record<string, any>, textTokens: (s: string) => number): number {
  const source = b.source ?? {};
  if (b.type === 'document' && source.type === 'text') return textTokens(String(source.data ?? ''));
  if (source.type !== 'base64' || typeof source.data !== 'string') return 1_600;
  const bytes = Buffer.from(source.data, 'base64');
  if (b.type === 'document') return Math.max(1, pdfPages(bytes)) * 1_500;
  if (signature(bytes) === 'image/png' && bytes.length >= 24) {
    const w = bytes.readUInt32BE(16);
    const h = bytes.readUInt32BE(20);
    return Math.max(1, Math.min(1_600, Math.ceil((w * h) / 750)));
  }
  return 1_600;
}

export function isMediaBlock(b: unknown): b is Record<string, any> {
  return typeof b === 'object' && b !== null && ((b as { type?: unknown }).type === 'image' || (b as { type?: unknown }).type === 'document');
}

function signature(b: Buffer): string | undefined {
  const starts = (...sig: number[]) => sig.every((v, i) => b[i] === v);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (starts(0x52, 0x49, 0x46, 0x46) && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (starts(0x25, 0x50, 0x44, 0x46)) return 'application/pdf';
  return undefined;
}

function pdfPages(b: Buffer): number {
  return (b.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;
}
