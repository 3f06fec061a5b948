const net = require('net');
const { TestWorkflowEnvironment } = require('@temporalio/testing');
(async () => {
  const hold = net.createServer(); await new Promise(r => hold.listen(0, '127.0.0.1', r));
  const port = hold.address().port;
  const t = Date.now();
  try {
    const env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: '/work/main/.temporal/bin/temporal' }, ip: '127.0.0.1', port, log: { format: 'pretty', level: 'warn' } } });
    console.log('started?!'); await env.teardown();
  } catch (e) { console.log('failed after', Date.now() - t, 'ms:', e && e.constructor.name, String(e.message).slice(0, 500)); }
  hold.close();
})();
