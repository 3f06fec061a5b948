/**
 * Attachment blocks (provider-neutral references, core/entries) as Anthropic's own blocks: an image as
 * `image` with a base64 source, a PDF as `document` with a base64 source, a text file as `document` with
 * a text source, each with the bytes the worker read from the store just before the call. A masked
 * attachment, or one sent where no bytes were resolved (a summariser's request), is its one-line placeholder.
 */
import { attachmentPlaceholder, isImage } from '../../../core/attachments';
import type { ApiMessage, AttachmentBlock } from '../../../core/entries';
import type { AttachmentData } from '../../stores/attachments';

export type AttachmentBytes = ReadonlyMap<string, AttachmentData>;

/** The messages with every attachment block replaced by the provider's block (messages without one are returned as they are). */
export function withAttachmentBlocks<M extends { content: unknown }>(messages: M[], data: AttachmentBytes | undefined): M[] {
  return messages.map((m) => {
    const content = (m as unknown as ApiMessage).content;
    if (!Array.isArray(content) || !content.some((b) => b.type === 'attachment')) return m;
    return { ...m, content: content.map((b) => (b.type === 'attachment' ? anthropicBlock(b, data?.get(b.hash)) : b)) };
  });
}

function anthropicBlock(a: AttachmentBlock, data: AttachmentData | undefined): object {
  if (a.masked || !data) return { type: 'text', text: attachmentPlaceholder(a) };
  if (isImage(a.mediaType)) return { type: 'image', source: { type: 'base64', media_type: a.mediaType, data: data.base64 } };
  if (a.mediaType === 'text/plain') return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: data.text ?? '' }, title: a.name };
  return { type: 'document', source: { type: 'base64', media_type: a.mediaType, data: data.base64 }, title: a.name };
}
