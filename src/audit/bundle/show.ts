/**
 * `fh audit show`: the audit transcript of every run in a bundle, from the bundle alone: offloaded
 * payloads come from its blobs, and a tool result the model saw as an artifact reference is shown in
 * full (the stored output). Nothing is cut: Markdown shows every result and reply whole. Secrets are
 * hidden as the share page hides them (core/share/redact), in the Markdown and the JSON alike.
 */
import { toolResultKey } from '../../activities/stores/tool-results';
import { redactText } from '../../core/share/redact';
import { auditTranscript } from '../collect';
import { renderAuditMarkdown } from '../markdown';
import type { AuditRecord, AuditRun } from '../records';
import type { BundleRun } from './format';
import { runHistory, type OpenBundle } from './read';

export interface BundleRunAudit {
  run: BundleRun;
  audit: { run: AuditRun; records: AuditRecord[] };
  markdown: string;
}

const ARTIFACT = /\[artifact ([0-9a-f]{64}):/;
const WHOLE = Number.MAX_SAFE_INTEGER;

export async function auditBundle(b: OpenBundle, opts: { redact?: boolean } = {}): Promise<BundleRunAudit[]> {
  const out: BundleRunAudit[] = [];
  const hide = opts.redact === false ? (s: string) => s : (s: string) => redactText(s);
  for (const run of b.manifest.runs) {
    const t = await auditTranscript(runHistory(b, run), { store: b.store, truncateAt: WHOLE, workflowId: run.workflowId, runId: run.runId });
    for (const r of t.json.records) if (r.type === 'tool_call') await resolveArtifact(b, r);
    const audit = deepMap(t.json, hide) as BundleRunAudit['audit'];
    const title = `<!-- ${run.history}: ${run.role}${run.parent ? ` of ${run.parent.workflowId} (event ${run.parent.eventId})` : ''} -->\n`;
    out.push({ run, audit, markdown: title + hide(renderAuditMarkdown(t.json, { truncateAt: WHOLE })) });
  }
  return out;
}

/** A result the model got as an artifact reference: the stored output, whole. */
async function resolveArtifact(b: OpenBundle, r: Extract<AuditRecord, { type: 'tool_call' }>): Promise<void> {
  if (typeof r.result !== 'string') return;
  const m = ARTIFACT.exec(r.result);
  if (!m) return;
  const stored = await b.store.get(toolResultKey(m[1]!));
  if (!stored) return;
  const full = Buffer.from(stored).toString('utf8');
  r.result = full;
  r.resultPreview = `${full}\n\n(the model saw it as artifact ${m[1]}, ${full.length} characters)`;
  r.truncated = false;
}

/** The value with every string passed through `fn` (redaction string by string keeps the JSON valid). */
function deepMap(v: unknown, fn: (s: string) => string): unknown {
  if (typeof v === 'string') return fn(v);
  if (Array.isArray(v)) return v.map((x) => deepMap(x, fn));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deepMap(x, fn)]));
  return v;
}
