/**
 * Node ids name a command stage's output files and go into its shell command: an id with a quote, a
 * path separator or `..` is refused when the graph is parsed (FLOW_INVALID naming the node and its
 * line), and the command quotes the paths it writes, so an id is never read as shell.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseFlow } from '../../src/core/flows/dot';
import { commandStageShell, FLOW_OUTPUT_DIR } from '../../src/core/flows/stage';
import { validateFlow } from '../../src/core/flows/validate';

/** A graph with a command node of this id, quoted as DOT quotes it (only `"` is escaped there; none of these has one). */
const withNode = (id: string) => `digraph {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  "${id}" [script="echo hi"]\n  start -> "${id}" -> exit\n}`;

describe('flow node ids', () => {
  it.each([
    ["x'; touch PWNED; echo '", "contains a quote (')"],
    ['../../escaped', 'contains a path separator'],
    ['a/b', 'contains a path separator'],
    ['a\\b', 'contains a path separator'],
    ['up..there', "contains '..'"],
  ])('%j is refused at parse time, naming the node and its line', (id, why) => {
    expect(() => parseFlow(withNode(id))).toThrow(
      expect.objectContaining({ code: 'FLOW_INVALID', element: `node ${JSON.stringify(id)}`, line: 4, message: expect.stringContaining(`its id ${why}`) }),
    );
  });

  it('plain ids, dots and spaces included, still parse', () => {
    for (const id of ['run_tests', 'build-2', 'v1.2', 'run tests']) expect(() => parseFlow(withNode(id))).not.toThrow();
  });

  /** A parsed graph whose command node is renamed (a typed graph, as loadFlow and the workflow get it). */
  const renamed = (id: string) => {
    const graph = parseFlow(withNode('ok'));
    graph.nodes.find((n) => n.id === 'ok')!.id = id;
    graph.edges = graph.edges.map((e) => ({ ...e, from: e.from === 'ok' ? id : e.from, to: e.to === 'ok' ? id : e.to }));
    return graph;
  };

  it('a typed graph is checked the same (a control character, too)', () => {
    expect(() => validateFlow(renamed('line\nbreak'))).toThrow(expect.objectContaining({ code: 'FLOW_INVALID', element: 'node "line\\nbreak"', line: 4, message: expect.stringContaining('its id contains a control character') }));
  });

  it('a recorded run that predates the check replays without it (nodeIds: false)', () => {
    const graph = renamed('a/b');
    expect(() => validateFlow(graph)).toThrow(expect.objectContaining({ code: 'FLOW_INVALID' }));
    expect(() => validateFlow(graph, { nodeIds: false })).not.toThrow();
  });

  it("the stage's command quotes its file paths: an id with a quote is written as a file name, never run", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-ids-'));
    const id = "x'; touch PWNED; echo '";
    execFileSync('bash', ['-c', commandStageShell('echo hi; echo oops >&2', `${FLOW_OUTPUT_DIR}/${id}-1-1`)], { cwd: dir });
    expect((await fs.readdir(dir)).sort()).toEqual([FLOW_OUTPUT_DIR]);
    expect((await fs.readdir(path.join(dir, FLOW_OUTPUT_DIR))).sort()).toEqual([`${id}-1-1.err`, `${id}-1-1.out`]);
    expect(await fs.readFile(path.join(dir, FLOW_OUTPUT_DIR, `${id}-1-1.out`), 'utf8')).toBe('hi\n');
    expect(await fs.readFile(path.join(dir, FLOW_OUTPUT_DIR, `${id}-1-1.err`), 'utf8')).toBe('oops\n');
  });
});
