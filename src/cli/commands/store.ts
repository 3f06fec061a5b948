/** fh store gc: remove store blobs that no retained workflow history refers to. */
import { parseDuration, type SweepReport } from '../../activities/store-gc';
import { collectStoreGarbage } from '../../client/collect-garbage';
import { flag, JSON_OPTION, str, type Parsed } from '../args';
import { asCliError, connect, printJson, STORE_OPTION, storeFrom, type Command, type Io } from '../context';
import { EXIT, usage } from '../errors';

const DEFAULT_GRACE = '24h';

export const storeCommand: Command = {
  name: 'store',
  summary: 'store maintenance: `fh store gc` removes blobs no retained history refers to',
  usage: ['store gc [--store-dir <dir>] [--older-than 24h] [--dry-run] [--json]'],
  description: [
    'Marks every blob that a workflow of the namespace refers to (open runs, and closed runs the namespace still retains:',
    'everything its visibility lists), then removes the unreferenced blobs older than --older-than.',
    "Run it against the namespace whose workers use this store; a store shared by several namespaces must not be collected",
    "by one of them. Histories exported to files (fh history export) are not seen: keep a copy of the store with them.",
  ].join('\n'),
  connects: true,
  options: {
    ...STORE_OPTION,
    'older-than': {
      type: 'string',
      value: '<duration>',
      help: 'grace period: keep unreferenced blobs younger than this (90s, 30m, 12h, 7d)',
      default: DEFAULT_GRACE,
    },
    'dry-run': { type: 'boolean', help: 'list what would be removed; remove nothing' },
    ...JSON_OPTION,
  },
  examples: ['fh store gc --dry-run', 'fh store gc --store-dir /var/lib/fh/store --older-than 7d'],
  run: (p, io) => runStore(p, io),
};

async function runStore(p: Parsed, io: Io): Promise<number> {
  const [sub, ...extra] = p.positionals;
  if (sub !== 'gc') throw usage(sub ? `unknown store command '${sub}'; the store command has: gc` : 'say what to do: fh store gc');
  if (extra.length) throw usage(`unexpected argument '${extra[0]}' (fh store gc)`);
  const graceText = str(p, 'older-than') ?? DEFAULT_GRACE;
  const olderThanMs = parseDuration(graceText);
  if (olderThanMs === undefined) throw usage(`--older-than must be a duration like 90s, 30m, 12h or 7d; got '${graceText}'`);
  const store = storeFrom(p);
  await store.checked(); // refuses a store that is not private before anything is read from it

  const c = await connect(p);
  try {
    const retention = await namespaceRetention(c.client, c.settings.namespace);
    const { histories, vanished, ...report } = await collectStoreGarbage(c.client, { dir: store.dir, olderThanMs, dryRun: flag(p, 'dry-run') });
    if (flag(p, 'json')) printJson(io, { ...report, namespace: c.settings.namespace, retention, histories, vanished, olderThanMs });
    else io.out(render(report, c.settings.namespace, retention, histories, graceText));
    return EXIT.OK;
  } catch (err) {
    throw asCliError(err, { settings: c.settings });
  } finally {
    await c.close();
  }
}

async function namespaceRetention(client: import('@temporalio/client').Client, namespace: string): Promise<string | null> {
  try {
    const ns = await client.workflowService.describeNamespace({ namespace });
    const seconds = Number(ns.config?.workflowExecutionRetentionTtl?.seconds ?? 0);
    return seconds ? `${Math.round(seconds / 3600)}h` : null;
  } catch {
    return null; // an API key scoped to the namespace may not describe it; the listing is what counts
  }
}

function render(r: SweepReport, namespace: string, retention: string | null, histories: number, grace: string): string {
  const mb = (r.removedBytes / 1_048_576).toFixed(2);
  return [
    `store ${r.dir}: ${r.blobs} blobs; ${r.referenced} referenced by the ${histories} histories of namespace '${namespace}'` +
      ` (retention ${retention ?? 'unknown'}); ${r.young} unreferenced but younger than ${grace}`,
    `${r.dryRun ? 'would remove' : 'removed'} ${r.removed.length} blobs (${mb} MB)`,
    ...r.removed.map((k) => `  ${k}`),
  ].join('\n');
}
