/**
 * Attachments without a server: the fake refuses images and documents as the Messages API does, the
 * reference checks name the field, the provider's blocks are built from the bytes (or a placeholder),
 * and the client refuses before it writes anything to the store.
 */
import { validateMessagesRequest, countFakeTokens } from '@fabric-harness/sdk/testing';
import { attachmentPlaceholder, attachmentTokens, checkAttachmentLimits, parseAttachmentRefs, pdfPageCount, type AttachmentRef } from '../../src/core/attachments';
import { toApiMessages, type Entry, type UserEntry } from '../../src/core/entries';
import { estimateEntryTokens } from '../../src/core/tokens';
import { attachmentMaskId, maskStaleToolResults } from '../../src/core/context/mask';
import { purgeToolResults } from '../../src/core/context/ladder';
import { carryUserMessages } from '../../src/core/context/compaction/user-messages';
import { resetConversation } from '../../src/core/context/reset';
import { contextBudget } from '../../src/core/budget';
import { contextGauge } from '../../src/board/gauge';
import { renderSharePage } from '../../src/core/share/page';
import { withAttachmentBlocks } from '../../src/activities/models/anthropic/attachment-blocks';
import { storeAttachments } from '../../src/client/attachments';
import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const pdf = (pages: number) => Buffer.from(`%PDF-1.4\n${Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj <</Type /Page>> endobj`).join('\n')}\n2 0 obj <</Type /Pages>> endobj\n%%EOF`, 'latin1');
const image = (media_type: string, data: string) => ({ type: 'image', source: { type: 'base64', media_type, data } });
const request = (block: object) => ({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: [block, { type: 'text', text: 'what is this?' }] }] });

describe('the fake refuses attachments as the API does', () => {
  it('accepts a valid image, PDF and text document', () => {
    expect(validateMessagesRequest(request(image('image/png', PNG.toString('base64'))))).toBeUndefined();
    expect(validateMessagesRequest(request({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf(2).toString('base64') }, title: 'a.pdf' }))).toBeUndefined();
    expect(validateMessagesRequest(request({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'a,b\n1,2' } }))).toBeUndefined();
  });

  it('refuses an unsupported media type, invalid base64, bytes of another type, an image over 5 MB, a PDF over 100 pages', () => {
    expect(validateMessagesRequest(request(image('image/bmp', PNG.toString('base64'))))).toBe(
      "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
    );
    expect(validateMessagesRequest(request(image('image/png', 'not base64!')))).toMatch(/messages\.0\.content\.0\.image\.source\.base64\.data: invalid base64/);
    expect(validateMessagesRequest(request(image('image/jpeg', PNG.toString('base64'))))).toBe(
      'messages.0.content.0.image.source.base64.data: The image was specified using the image/jpeg media type, but the image appears to be a image/png image',
    );
    const big = Buffer.alloc(4 * 1024 * 1024);
    PNG.copy(big);
    expect(validateMessagesRequest(request(image('image/png', big.toString('base64'))))).toMatch(/image exceeds 5 MB maximum: \d+ bytes > 5242880 bytes/);
    expect(validateMessagesRequest(request({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf(101).toString('base64') } }))).toMatch(
      /A maximum of 100 PDF pages may be provided/,
    );
  });

  it('counts an image as the API does, not by its base64 length', () => {
    const tokens = countFakeTokens({ messages: [{ role: 'user', content: [image('image/png', PNG.toString('base64'))] }] });
    expect(tokens).toBeLessThan(20);
  });
});

describe('attachment references', () => {
  const ref: AttachmentRef = { name: 'a.png', mediaType: 'image/png', hash: 'a'.repeat(64), size: 70 };

  it('checks the shape and limits, naming the field', () => {
    expect(parseAttachmentRefs([ref])).toEqual([ref]);
    expect(() => parseAttachmentRefs([{ ...ref, hash: 'xyz' }])).toThrow(/attachments.*0\.hash/);
    expect(() => checkAttachmentLimits([{ ...ref, mediaType: 'image/tiff' }])).toThrow(expect.objectContaining({ code: 'ATTACHMENT_UNSUPPORTED_TYPE', field: 'attachments.0.mediaType' }));
    expect(() => checkAttachmentLimits([{ ...ref, size: 4_000_000 }])).toThrow(expect.objectContaining({ code: 'ATTACHMENT_TOO_LARGE', field: 'attachments.0.size' }));
    expect(() => checkAttachmentLimits(Array.from({ length: 21 }, () => ref))).toThrow(expect.objectContaining({ code: 'ATTACHMENT_TOO_LARGE', unit: 'attachments' }));
    expect(pdfPageCount(pdf(3).toString('latin1'))).toBe(3);
  });

  it('becomes the provider block with the bytes, and a placeholder without them or once masked', () => {
    const messages = toApiMessages([{ type: 'user', text: 'look', attachments: [ref] }]);
    expect(messages[0]!.content.map((b) => b.type)).toEqual(['attachment', 'text']);
    const data = new Map([[ref.hash, { base64: 'QUJD' }]]);
    expect(withAttachmentBlocks(messages, data)[0]!.content[0]).toEqual(image('image/png', 'QUJD'));
    expect(withAttachmentBlocks(messages, undefined)[0]!.content[0]).toEqual({ type: 'text', text: '[attachment "a.png" (image/png, 70 bytes) omitted from context]' });
    const masked = toApiMessages([{ type: 'user', text: 'look', attachments: [{ ...ref, masked: true }] }]);
    expect(withAttachmentBlocks(masked, data)[0]!.content[0]).toMatchObject({ type: 'text' });
  });

  it('the client refuses before it stores anything', async () => {
    const store = new MemoryTranscriptStore();
    await expect(storeAttachments(store, [{ bytes: PNG, mediaType: 'image/png', name: 'ok.png' }, { bytes: PNG, mediaType: 'image/jpeg', name: 'mislabelled.jpg' }])).rejects.toMatchObject({
      code: 'ATTACHMENT_UNSUPPORTED_TYPE',
      field: 'attachments.1.mediaType',
    });
    await expect(storeAttachments(store, [{ bytes: pdf(101), mediaType: 'application/pdf' }])).rejects.toMatchObject({ code: 'ATTACHMENT_TOO_LARGE', unit: 'pages' });
    expect(store.size).toBe(0);
    const [stored] = (await storeAttachments(store, [{ bytes: PNG, mediaType: 'image/png', name: 'ok.png' }]))!;
    expect(stored).toEqual({ name: 'ok.png', mediaType: 'image/png', hash: expect.stringMatching(/^[0-9a-f]{64}$/), size: PNG.length });
    expect(store.size).toBe(1);
  });
});

describe('attachments in the context budget, masking, compaction and overflow resets', () => {
  const img: AttachmentRef = { name: 'shot.png', mediaType: 'image/png', hash: 'b'.repeat(64), size: 70_000 };
  const old: Entry[] = [
    { type: 'user', text: 'what is wrong on this page?', attachments: [img] },
    { type: 'assistant', content: [{ type: 'text', text: 'the button overlaps' }] },
    { type: 'user', text: 'thanks, next question' },
    { type: 'assistant', content: [{ type: 'text', text: 'sure' }] },
  ];

  it('counts an attachment in the estimate, and its placeholder once masked', () => {
    const plain = estimateEntryTokens({ type: 'user', text: 'what is wrong on this page?' });
    expect(estimateEntryTokens(old[0]!)).toBe(plain + attachmentTokens(img));
    expect(estimateEntryTokens({ type: 'user', text: 'what is wrong on this page?', attachments: [{ ...img, masked: true }] })).toBeLessThan(plain + 40);
  });

  it('masks an old attachment to its placeholder, by a recorded id too, and keeps one a later message names', () => {
    const result = maskStaleToolResults(old, { before: 2 });
    expect(result.ids).toEqual([attachmentMaskId(img)]);
    expect((result.entries[0] as UserEntry).attachments).toEqual([{ ...img, masked: true }]);
    expect(result.savedTokens).toBeGreaterThan(1_000);
    expect(toApiMessages(result.entries)[0]!.content[0]).toMatchObject({ type: 'attachment', masked: true });
    // Replayed from the recorded ids.
    expect(maskStaleToolResults(old, { before: 2, ids: result.ids }).entries).toEqual(result.entries);
    // Still in use: a later message names the file.
    const named: Entry[] = [...old.slice(0, 2), { type: 'user', text: 'look again at shot.png' }, old[3]!];
    expect(maskStaleToolResults(named, { before: 2 }).masked).toBe(0);
  });

  it("purge masks old attachments but not the running prompt's", () => {
    const running: Entry[] = [...old, { type: 'user', text: 'and this one?', attachments: [{ ...img, hash: 'c'.repeat(64), name: 'new.png' }] }, { type: 'assistant', content: [{ type: 'text', text: 'x' }] }];
    const purged = purgeToolResults(running, running.length).entries;
    expect((purged[0] as UserEntry).attachments![0]!.masked).toBe(true);
    expect((purged[4] as UserEntry).attachments![0]!.masked).toBeUndefined();
  });

  it('a summary keeps a replaced attachment as its placeholder line', () => {
    expect(carryUserMessages(old.slice(0, 2), [])).toEqual([`what is wrong on this page?\n${attachmentPlaceholder(img)}`]);
  });

  it("an overflow's reset resends the running prompt with its attachments", () => {
    const next = resetConversation({ summary: 's', fallback: true, prompt: old[0] as UserEntry, compactedEntries: 3 });
    expect(next[1]).toEqual(old[0]);
  });

  it('the gauge shows attachments as a layer of their own', () => {
    const budget = contextBudget({ entries: old, contextWindowTokens: 200_000, reserveTokens: 4_096 });
    const gauge = contextGauge({ budget, entries: old, compaction: null, usage: null });
    expect(gauge.layers.find((l) => l.key === 'attachments')?.tokens).toBe(attachmentTokens(img));
    const total = gauge.layers.reduce((n, l) => n + l.tokens, 0);
    expect(total).toBe(budget.usedTokens);
  });
});

describe('the share page shows attachments safely', () => {
  const png: AttachmentRef = { name: 'shot.png', mediaType: 'image/png', hash: 'd'.repeat(64), size: 70 };
  const page = (attachments: AttachmentRef[], images: Map<string, string>) =>
    renderSharePage({ title: 't', sharedAt: 0, entries: [{ type: 'user', text: 'see', attachments }], images });

  it('draws a raster image as a data: URL, and only that', () => {
    const html = page([png], new Map([[png.hash, PNG.toString('base64')]]));
    expect(html).toContain(`<img alt="shot.png" src="data:image/png;base64,${PNG.toString('base64')}">`);
    expect(html).toContain("img-src data:;");
  });

  it('never draws SVG, data that is not base64, or a masked image; names are escaped text', () => {
    const svg = { ...png, mediaType: 'image/svg+xml', hash: 'e'.repeat(64), name: '<script>x</script>.svg' } as unknown as AttachmentRef;
    const html = page([svg, { ...png, hash: 'f'.repeat(64) }, { ...png, masked: true }], new Map([
      [svg.hash, 'PHN2Zz48L3N2Zz4='],
      ['f'.repeat(64), 'x" onerror="alert(1)'],
      [png.hash, PNG.toString('base64')],
    ]));
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script>x');
    expect(html).toContain('Attachment: &lt;script&gt;x&lt;/script&gt;.svg (image/svg+xml, 70 bytes)');
  });
});
