// "To disable:" from docs/compaction.md (the product doc), as an expression the test evaluates.
import { init } from '@fabric-harness/sdk';

export const disabled = () =>
  // seed:begin
  init({ compaction: { enabled: false } })
  // seed:end
;
