const WebSocket = require('ws');
const [url, expr] = process.argv.slice(2);
const ws = new WebSocket(url);
ws.on("open", () => ws.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression: expr, returnByValue: true, includeCommandLineAPI: true } })));
ws.on("message", (m) => { const d = JSON.parse(String(m)); if (d.id === 1) { console.log(JSON.stringify(d.result, null, 1).slice(0, 6000)); process.exit(0); } });
