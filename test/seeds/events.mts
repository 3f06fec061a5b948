// The event-subscription sample of docs/compaction.md (the product doc), verbatim between the markers (top-level await:
// an ES module).
// seed:begin
import { init, isEvent, type AgentEvent } from '@fabric-harness/sdk';
const fabric = await init({
  onEvent: (event: AgentEvent) => {
    if (isEvent(event, 'compaction')) {
      console.log(
        `compacted ${event.data.messagesBefore} → ${event.data.messagesAfter}`,
        `(reason: ${event.data.reason}, ${event.data.tokensBefore} tokens)`,
      );
    }
  },
});
// seed:end
