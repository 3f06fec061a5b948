const { replayHistory, readHistoryFile } = require('./dist/client/replay');
const { Runtime, DefaultLogger, makeTelemetryFilterString } = require('@temporalio/worker');
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
(async () => {
  for (const mod of ['test/fixtures/cli-agents.js', 'test/fixtures/changed-agents.ts']) {
    const t = Date.now();
    const r = await replayHistory('/tmp/fhx/calc.json', { agents: mod });
    console.log(Date.now() - t, JSON.stringify(r, null, 1));
  }
})().catch(e => { console.error(e); process.exit(1); });
