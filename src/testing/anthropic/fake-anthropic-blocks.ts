/** Small readers of request bodies the fake Anthropic server's checks share. */

/** A JSON object (not null, not an array). */
export const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A message's content blocks (a string content is one text block). */
export const blocksOf = (m: any): any[] => (Array.isArray(m?.content) ? m.content : typeof m?.content === 'string' ? [{ type: 'text', text: m.content }] : []);
