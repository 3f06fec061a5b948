import type { StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { McpStdioServer } from '../../core/mcp';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ToolSandbox } from '../tools/tool-env';

/**
 * How a stdio MCP server is started: the one place that applies the tool sandbox to it, so a change
 * of sandbox (bubblewrap profile, environment rules) is a change here only.
 *
 * The server gets what bash gets: the sandbox's minimal environment (the worker's own variables —
 * API keys, store settings — never reach it) plus the server's own `env`, runs in the session's
 * sandbox directory, and inside the sandbox's wrapper when the worker has one. `env -i` first: the MCP
 * SDK would otherwise add the worker's HOME, USER, SHELL and LOGNAME under ours.
 */
export function stdioLaunch(sandbox: ToolSandbox, server: McpStdioServer, cwd: string): StdioServerParameters {
  const env = { ...sandbox.env(cwd), ...server.env };
  // The wrapper runs `bash -c <command>`: exec the server with its argv as given, no shell parsing.
  // The server's own files (an absolute command, absolute script paths) are visible read-only in the sandbox.
  const wrapped = sandbox.argv('exec "$0" "$@"', cwd, serverFiles(server));
  return {
    command: 'env',
    args: ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...wrapped, server.command, ...(server.args ?? [])],
    env: { PATH: env.PATH ?? '/usr/bin:/bin' },
    cwd,
    stderr: 'pipe',
  };
}

/**
 * What a server needs to read: the directories of the absolute paths among its command and arguments
 * that exist, and every node_modules above each (the directories Node's resolution visits, nearest
 * first: a package not in the nearest is looked up in the next).
 */
function serverFiles(server: McpStdioServer): string[] {
  const dirs = new Set<string>();
  for (const p of [server.command, ...(server.args ?? [])]) {
    if (!path.isAbsolute(p) || !fs.existsSync(p)) continue;
    const dir = fs.statSync(p).isDirectory() ? p : path.dirname(p);
    dirs.add(dir);
    for (let up = dir; ; up = path.dirname(up)) {
      const modules = path.join(up, 'node_modules');
      if (fs.existsSync(modules)) dirs.add(modules);
      if (path.dirname(up) === up) break;
    }
  }
  return [...dirs];
}
