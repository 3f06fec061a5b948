/**
 * What a request asks of its connection, checked against what the connection's provider can do
 * (ProviderCapabilities) before the call: a capability the provider lacks is refused with a named
 * error, never silently dropped (a request without server-side editing or thinking would be answered,
 * just not as asked). The model service checks here, so workers and inline runs refuse the same.
 */
import { FabricError } from '../../core/errors';
import type { MessagesCall, ProviderCapabilities } from './port';

/** The capabilities a request can ask for, as ProviderCapabilities names them. */
export type RequestedCapability = 'serverContextEditing' | 'thinking' | 'tokenCounting';

const WHAT: Record<RequestedCapability, string> = {
  serverContextEditing: "server-side context editing (compaction.strategy 'server'; use 'client' or 'auto')",
  thinking: 'thinking (set thinking off for this connection)',
  tokenCounting: "exact token counts (compaction.estimator 'count-tokens'; use 'heuristic')",
};

/** A request asked for something its connection's provider cannot do. */
export class CapabilityUnsupportedError extends FabricError {
  declare readonly code: 'CAPABILITY_UNSUPPORTED';
  readonly capability: RequestedCapability;
  readonly connection: string;
  readonly protocol: string;

  constructor(capability: RequestedCapability, connection: string, protocol: string) {
    super('CAPABILITY_UNSUPPORTED', `connection '${connection}' (${protocol}) has no ${WHAT[capability]}`);
    this.capability = capability;
    this.connection = connection;
    this.protocol = protocol;
  }
}

/** Throws CAPABILITY_UNSUPPORTED for the first thing `call` asks that `capabilities` lack. */
export function assertCapable(call: MessagesCall, provider: { protocol: string; capabilities: ProviderCapabilities }, connection: string): void {
  const caps = provider.capabilities;
  if (call.contextManagement && !caps.serverContextEditing) throw new CapabilityUnsupportedError('serverContextEditing', connection, provider.protocol);
  if (call.thinking && !caps.thinking) throw new CapabilityUnsupportedError('thinking', connection, provider.protocol);
}
