/** What the Node entries export for inline sessions (the workflow entries export stubs: ../core/inline-sessions-unavailable). */
export { openSession, listInlineSessions } from './sessions';
export type { InlineSession, OpenSessionOptions } from './sessions';
export { JsonlSessionStore, defaultSessionsDir } from './session-files';
export type { InlineSessionHeader, SessionLabel, ListSessionsOptions, JsonlSessionStoreOptions } from './session-files';
export {
  InvalidSessionIdError,
  InvalidSessionHeaderError,
  SessionNotFoundError,
  SessionExistsError,
  SessionFileCorruptError,
  SessionAgentMismatchError,
} from './session-errors';
