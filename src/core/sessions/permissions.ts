/**
 * What a permission mode lets a tool call do. Tools declare whether they only read (`readOnly`); every
 * other tool counts as writing. explore: reads run, writes are refused; ask: reads run, writes wait for
 * the user's approval; execute: everything runs.
 */
import type { PermissionMode } from './settings';

export type ToolEffect = 'read' | 'write';
export type ToolPermission = 'run' | 'ask' | 'refuse';

/** A tool that does not say it is read-only may change things, so it counts as a write. */
export function toolEffect(def: { readOnly?: boolean }): ToolEffect {
  return def?.readOnly === true ? 'read' : 'write';
}

const PERMISSIONS: Record<PermissionMode, Record<ToolEffect, ToolPermission>> = {
  explore: { read: 'run', write: 'refuse' },
  ask: { read: 'run', write: 'ask' },
  execute: { read: 'run', write: 'run' },
};

export function permissionFor(mode: PermissionMode, effect: ToolEffect): ToolPermission {
  const byEffect = PERMISSIONS[mode];
  // An unknown mode or effect (bad data from outside the types) gets the most careful answer.
  return byEffect?.[effect] ?? 'ask';
}

/** The permission for calling a tool in a mode: permissionFor(mode, toolEffect(def)). */
export function permissionForTool(mode: PermissionMode, def: { readOnly?: boolean }): ToolPermission {
  return permissionFor(mode, toolEffect(def));
}

/** The tool_result the model gets for a write tool refused in explore mode. */
export function refusedInExploreText(toolName: string): string {
  return (
    `Tool '${toolName}' was not run: this session is in explore mode, where only read-only tools run. ` +
    'Continue with read-only tools, or tell the user what you would change and ask them to switch the permission mode to ask or execute.'
  );
}

/** The tool_result the model gets when the user declines a tool call (with their note, if any). */
export function deniedText(toolName: string, note?: string): string {
  const said = typeof note === 'string' && note.trim() ? ` The user said: ${note.trim()}` : '';
  return `The user denied running tool '${toolName}', so it was not run. Do not retry the same call; adapt your approach or ask the user how to proceed.${said}`;
}
