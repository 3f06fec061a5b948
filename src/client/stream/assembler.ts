/**
 * What a client has of each call's reply, from the live events it yielded: the attempt it follows and
 * each content block so far. A higher attempt voids the earlier one's partial output. When the call
 * ends, `catchUp` says what the reader must still yield so that the assembled reply equals the reply
 * history holds (message_end's content): live events can be missed (the activity's last heartbeat
 * never left, or the attempt outgrew its details).
 */
import type { StreamEvent, StreamEventOf } from '../../wire/stream';

type Block = { type: 'text' | 'thinking' | 'redacted_thinking' | 'tool_use' | 'other'; text: string; id?: string; name?: string; stopped: boolean };

export class CallAssembly {
  attempt = 0;
  /** The offset of the last live event applied (a reader re-reads a call's details on every look). */
  lastOffset = -1;
  readonly blocks = new Map<number, Block>();

  apply(event: StreamEvent): void {
    if (event.type === 'attempt_started') {
      if ((event.attempt ?? 1) !== this.attempt) this.blocks.clear();
      this.attempt = event.attempt ?? 1;
      return;
    }
    if (event.attempt !== undefined && event.attempt !== this.attempt) {
      // an event of an attempt whose start we did not see (a reader that joined late)
      this.blocks.clear();
      this.attempt = event.attempt;
    }
    switch (event.type) {
      case 'block_started': {
        const b = event.block;
        this.blocks.set(event.index, {
          type: b.type,
          text: '',
          stopped: false,
          ...(b.type === 'tool_use' ? { id: b.id, name: b.name } : {}),
        });
        return;
      }
      case 'text_delta':
        this.block(event.index, 'text').text += event.text;
        return;
      case 'thinking_delta':
        this.block(event.index, 'thinking').text += event.thinking;
        return;
      case 'tool_input_delta':
        this.block(event.index, 'tool_use').text += event.partialJson;
        return;
      case 'block_stopped': {
        const b = this.blocks.get(event.index);
        if (b) b.stopped = true;
        return;
      }
      default:
        return;
    }
  }

  /** The text blocks joined: the reply's text as assembled. */
  text(): string {
    return [...this.blocks.entries()]
      .sort(([a], [b]) => a - b)
      .filter(([, b]) => b.type === 'text')
      .map(([, b]) => b.text)
      .join('');
  }

  private block(index: number, type: Block['type']): Block {
    let b = this.blocks.get(index);
    if (!b) this.blocks.set(index, (b = { type, text: '', stopped: false }));
    return b;
  }

  /**
   * The live events still missing for the reply `end` reports. Blocks are matched in order, skipping
   * whitespace-only text blocks the reply dropped (the API refuses them when sent back).
   */
  catchUp(end: StreamEventOf<'message_end'>): StreamEvent[] {
    const ids = { callId: end.callId, ...(end.messageId !== undefined ? { messageId: end.messageId } : {}) };
    const out: StreamEvent[] = [];
    const attempt = end.attempt ?? this.attempt;
    if (attempt !== this.attempt && attempt > 0) {
      out.push({ type: 'attempt_started', kind: 'model', ...ids, attempt });
      this.blocks.clear();
      this.attempt = attempt;
    }
    const tag = { ...ids, ...(attempt > 0 ? { attempt } : {}) };
    const seen = [...this.blocks.entries()].sort(([a], [b]) => a - b);
    let next = seen.length ? seen[seen.length - 1]![0] + 1 : 0;
    let s = 0;
    for (const final of end.content) {
      while (s < seen.length && seen[s]![1].type === 'text' && seen[s]![1].text.trim() === '' && !(final.type === 'text' && final.text.startsWith(seen[s]![1].text))) s++;
      const have = s < seen.length && seen[s]![1].type === final.type ? seen[s]! : undefined;
      if (have) s++;
      const index = have ? have[0] : next++;
      const block = have?.[1];
      if (!block) {
        const start = final.type === 'tool_use' ? { type: 'tool_use' as const, id: final.id, name: final.name } : final.type === 'compaction' ? { type: 'other' as const, blockType: 'compaction' } : { type: final.type };
        out.push({ type: 'block_started', ...tag, index, block: start });
      }
      const had = block?.text ?? '';
      if (final.type === 'text' && final.text.startsWith(had) && final.text.length > had.length) {
        out.push({ type: 'text_delta', ...tag, index, text: final.text.slice(had.length) });
      } else if (final.type === 'thinking' && final.thinking.startsWith(had) && final.thinking.length > had.length) {
        out.push({ type: 'thinking_delta', ...tag, index, thinking: final.thinking.slice(had.length) });
      } else if (final.type === 'tool_use') {
        // The partial JSON as streamed; the final input re-serialised matches it when spaced alike (else only the rest of an empty one).
        const json = JSON.stringify(final.input ?? {});
        if (had === '' || (json.startsWith(had) && json.length > had.length)) out.push({ type: 'tool_input_delta', ...tag, index, partialJson: json.slice(had.length) });
      }
      if (!block?.stopped) out.push({ type: 'block_stopped', ...tag, index });
    }
    for (const e of out) this.apply(e);
    return out;
  }
}
