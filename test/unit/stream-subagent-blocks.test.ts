/**
 * A sub-agent's stream inside its parent's offsets: the parent reserves a block for the child's whole
 * stream; the child's log, bounded by that block, gives its own calls and sub-agents a share of it and
 * publishes nothing past its end.
 */
import { StreamLog, STREAM_BLOCK_SIZE, SUBAGENT_BLOCK_SIZE } from '../../src/workflows/stream/log';

describe('sub-agent stream blocks', () => {
  it('a top-level run reserves a sub-agent block naming the child workflow and agent', () => {
    const log = new StreamLog(5);
    log.messageId = 'msg';
    const slot = log.openSubAgent('helper-1', 'helper')!;
    expect(slot).toEqual({ callId: 'helper-1', from: 5, to: 5 + SUBAGENT_BLOCK_SIZE, messageId: 'msg' });
    expect(log.publish({ type: 'title', title: 't' })).toBe(slot.to);
    expect(log.read(5).blocks).toEqual([{ callId: 'helper-1', kind: 'subagent', from: 5, to: slot.to, closed: false, messageId: 'msg', workflowId: 'helper-1', agent: 'helper' }]);
    log.close('helper-1');
    expect(log.read(5).blocks[0]!.closed).toBe(true);
  });

  it("a child's log stays inside its parent's block: its calls and sub-agents get a share of it", () => {
    const from = 1000;
    const child = new StreamLog(from, from + SUBAGENT_BLOCK_SIZE);
    // Before any event, everything from its first offset is readable here (nothing is in an earlier run).
    expect(child.read(from).oldest).toBe(from);
    const model = child.open('model')!;
    expect(model).toMatchObject({ from, to: from + STREAM_BLOCK_SIZE });
    const grandchild = child.openSubAgent('g-1', 'g')!;
    expect(grandchild.to - grandchild.from).toBe(SUBAGENT_BLOCK_SIZE / 256);
    const inner = new StreamLog(grandchild.from, grandchild.to);
    expect(inner.open('model')!.to - grandchild.from).toBe(STREAM_BLOCK_SIZE); // 2^28 / 256 = 2^20
    const deepest = inner.openSubAgent('d-1', 'd')!;
    const last = new StreamLog(deepest.from, deepest.to);
    expect(last.open('model')!.to - deepest.from).toBe((SUBAGENT_BLOCK_SIZE / 256 / 256) / 256);
  });

  it('a full range publishes nothing more and streams no call (never past its end)', () => {
    const log = new StreamLog(0, 600);
    // 600 / 256: calls get 2 offsets each.
    const first = log.open('model')!;
    expect(first).toMatchObject({ from: 0, to: 2 });
    for (let i = 0; i < 1000 && log.open('model'); i++) {
      // fill it
    }
    expect(log.next).toBeLessThanOrEqual(600);
    for (let i = 0; i < 1000 && log.publish({ type: 'title', title: 'x' }) >= 0; i++) {
      // fill the rest
    }
    expect(log.next).toBe(600);
    expect(log.publish({ type: 'title', title: 'y' })).toBe(-1);
    expect(log.open('tool', 'toolu_1')).toBeUndefined();
    expect(log.openSubAgent('c', 'c')).toBeUndefined();
    expect(log.read(0).events.every((e) => e.offset < 600)).toBe(true);
  });
});
