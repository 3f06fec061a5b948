/** The session workflow, in small rooms around a thin host (see host.ts). */
export { isSessionEnvelope, SessionHost } from './host';
