/**
 * Attachments: files a user sends with a prompt (an image, a PDF, a text document). Pure and
 * deterministic (it runs in workflow code): the reference a conversation keeps, the limits every side
 * checks, and what an attachment costs and looks like once masked.
 *
 * A conversation never holds an attachment's bytes: they are in the store under their sha256
 * (`attachments/<2>/<hash>`), written by the client that sent them, and read back by the worker just
 * before a model call (activities/stores/attachments.ts). History and transcripts hold only this
 * reference, about a hundred bytes.
 */
import { z } from 'zod';
import { FabricError } from './errors';
import { parseWith } from './validate';
import { lazySchema } from './lazy-schema';

/** What a user entry keeps of one attachment: its name, media type, content hash and size. */
export interface AttachmentRef {
  /** The file's name as the user gave it (shown to the model in placeholders, and in audit). */
  name: string;
  mediaType: AttachmentMediaType;
  /** sha256 of the bytes, lowercase hex: the store key's name. */
  hash: string;
  /** Bytes. */
  size: number;
  /** Set by masking: the model sees the one-line placeholder instead of the file (never set by a client). */
  masked?: true;
}

export const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
export const DOCUMENT_MEDIA_TYPES = ['application/pdf', 'text/plain'] as const;
/** The media types a model request can carry (Anthropic's image and document blocks take these). */
export const ATTACHMENT_MEDIA_TYPES = [...IMAGE_MEDIA_TYPES, ...DOCUMENT_MEDIA_TYPES] as const;
export type AttachmentMediaType = (typeof ATTACHMENT_MEDIA_TYPES)[number];

const MB = 1024 * 1024;
/**
 * The limits, checked before anything is queued. The provider's: an image's base64 data at most 5 MB
 * (so 3.75 MB of bytes), a request at most 32 MB, a PDF at most 100 pages. Ours: 20 attachments a
 * message, 24 MB of bytes a message (32 MB once base64), a text document 2 MB.
 */
export const ATTACHMENT_LIMITS = {
  imageBase64Bytes: 5 * MB,
  imageBytes: (5 * MB * 3) / 4,
  documentBytes: 24 * MB,
  textBytes: 2 * MB,
  pdfPages: 100,
  perMessage: 20,
  messageBytes: 24 * MB,
  nameChars: 200,
} as const;

export function isImage(mediaType: string): boolean {
  return (IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType);
}

/** An attachment over a limit (the provider's or ours), refused before anything is queued. */
export class AttachmentTooLargeError extends FabricError {
  constructor(
    readonly field: string,
    readonly size: number,
    readonly limit: number,
    readonly unit: 'bytes' | 'pages' | 'attachments' = 'bytes',
  ) {
    super('ATTACHMENT_TOO_LARGE', `${field}: ${size} ${unit}, over the limit of ${limit} ${unit}`);
  }
}

/** An attachment of a media type no model request can carry. */
export class AttachmentUnsupportedTypeError extends FabricError {
  constructor(
    readonly field: string,
    readonly mediaType: string,
  ) {
    super('ATTACHMENT_UNSUPPORTED_TYPE', `${field}: media type '${mediaType}' is not supported; use one of ${ATTACHMENT_MEDIA_TYPES.join(', ')}`);
  }
}

/** The reference's shape (the update validator and the conversation check it; limits are checked apart, with their own errors). */
export const attachmentRefSchema = lazySchema(() => z
  .object({
    name: z.string().min(1).max(ATTACHMENT_LIMITS.nameChars),
    mediaType: z.string(),
    hash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 in lowercase hex'),
    size: z.number().int().min(1),
  })
  .strict());

export const attachmentRefsSchema = lazySchema(() => z.array(attachmentRefSchema).optional());

/** Throws the named error for the first reference over a limit or of an unsupported type. */
export function checkAttachmentLimits(refs: readonly { mediaType: string; size: number }[], field = 'attachments'): void {
  if (refs.length > ATTACHMENT_LIMITS.perMessage) throw new AttachmentTooLargeError(field, refs.length, ATTACHMENT_LIMITS.perMessage, 'attachments');
  let total = 0;
  refs.forEach((r, i) => {
    const at = `${field}.${i}`;
    if (!(ATTACHMENT_MEDIA_TYPES as readonly string[]).includes(r.mediaType)) throw new AttachmentUnsupportedTypeError(`${at}.mediaType`, r.mediaType);
    const limit = isImage(r.mediaType) ? ATTACHMENT_LIMITS.imageBytes : r.mediaType === 'text/plain' ? ATTACHMENT_LIMITS.textBytes : ATTACHMENT_LIMITS.documentBytes;
    if (r.size > limit) throw new AttachmentTooLargeError(`${at}.size`, r.size, limit);
    total += r.size;
  });
  if (total > ATTACHMENT_LIMITS.messageBytes) throw new AttachmentTooLargeError(field, total, ATTACHMENT_LIMITS.messageBytes);
}

/** The references of a prompt, checked: shape (INVALID_INPUT naming the field), then limits and types. */
export function parseAttachmentRefs(value: unknown, field = 'attachments'): AttachmentRef[] | undefined {
  const refs = parseWith(attachmentRefsSchema, value, field);
  if (!refs || refs.length === 0) return undefined;
  checkAttachmentLimits(refs, field);
  return refs as AttachmentRef[];
}

/**
 * Estimated input tokens of an attachment, for the budget before the provider counts: an image is at most
 * about 1,600 tokens (Anthropic scales larger ones down to ~1.15 megapixels, w*h/750), a PDF page about
 * 1,500 (its text and its image), text about 4 bytes a token.
 */
export function attachmentTokens(ref: Pick<AttachmentRef, 'mediaType' | 'size'>): number {
  if (isImage(ref.mediaType)) return 1_600;
  if (ref.mediaType === 'text/plain') return Math.ceil(ref.size / 4);
  // A page of a typical PDF is some 50-100 KB; at least one page.
  return Math.max(1, Math.ceil(ref.size / 60_000)) * 1_500;
}

/** The one line an attachment becomes once masked or sent without its bytes (its name and type, never its content). */
export function attachmentPlaceholder(ref: Pick<AttachmentRef, 'name' | 'mediaType' | 'size'>): string {
  return `[attachment ${JSON.stringify(ref.name)} (${ref.mediaType}, ${ref.size} bytes) omitted from context]`;
}

/** Where an attachment's bytes live in the store. */
export function attachmentKey(hash: string): string {
  return `attachments/${hash.slice(0, 2)}/${hash}`;
}

/** Pages of a PDF, counted the way the provider's limit does closely enough to refuse early (`/Type /Page` objects). */
export function pdfPageCount(text: string): number {
  return (text.match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;
}
