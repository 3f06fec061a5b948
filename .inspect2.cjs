const WebSocket = require('ws');
const ws = new WebSocket(process.argv[2]);
let id = 0; const pending = new Map();
const call = (method, params) => new Promise((res) => { const i = ++id; pending.set(i, res); ws.send(JSON.stringify({ id: i, method, params })); });
ws.on('message', (m) => { const d = JSON.parse(String(m)); if (pending.has(d.id)) { pending.get(d.id)(d.result ?? d.error); pending.delete(d.id); } });
ws.on('open', async () => {
  const proto = await call('Runtime.evaluate', { expression: 'Object.getPrototypeOf(setTimeout(()=>{},0))' });
  const q = await call('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId });
  const out = await call('Runtime.callFunctionOn', { objectId: q.objects.objectId, returnByValue: true, functionDeclaration: 'function(){ return this.filter(t => !t._destroyed && t.hasRef()).map(t => ({ idle: t._idleTimeout, repeat: t._repeat, fn: String(t._onTimeout).slice(0, 600), name: t._onTimeout.name, start: t._idleStart, now: performance.now() })); }' });
  console.log(JSON.stringify(out, null, 1).slice(0, 10000));
  process.exit(0);
});
