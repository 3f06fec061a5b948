// The first code sample of docs/compaction.md (the product doc), verbatim between the markers.
// seed:begin
import { agent } from '@fabric-harness/sdk';
export default agent<{ message: string }>({
  name: 'long-running',
  run: async ({ init, input }) => {
    // Compaction is on by default. Override only if you need to.
    const session = await (await init({
      compaction: {
        enabled: true,
        reserveTokens: 8192, // default 4096
        keepRecentEntries: 30, // default 20
        // compactAtTokens auto-derived from contextWindow if not set
      },
    })).session();
    return { reply: await session.prompt(input.message) };
  },
});
// seed:end
