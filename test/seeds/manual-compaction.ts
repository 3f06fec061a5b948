// The manual-compaction sample of docs/compaction.md (the product doc) uses a `session` in scope; this function gives it one.
import type { Session } from '@fabric-harness/sdk';

export async function manualCompaction(session: Session): Promise<void> {
  // seed:begin
  const result = await session.compact({
    keepRecentEntries: 10,
    generateSummary: true,
    reason: 'manual',
  });
  console.log(result.summary, result.compactedEntries);
  // seed:end
}
