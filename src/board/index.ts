/**
 * `board()`: a web page for one Temporal namespace's sessions (inbox, a live session, the context gauge,
 * the audit transcript with a replay check), served from this package on 127.0.0.1 with a token in the
 * URL. `fh board` is the same from the command line. See docs/board.md.
 */
import type { Client } from '@temporalio/client';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import type { LiveBrokerClient } from '../client/stream/broker-transport';
import { startBoardServer, type BoardServer } from './server';
import { temporalBoardSource, type BoardSource } from './source';
import { temporalFlowSource, type BoardFlowSource } from './flow-source';

export interface BoardOptions {
  /** A client for the namespace to show (its plugin should be the harness's, to decode payloads). */
  client?: Client;
  /** Or any other source of sessions (tests, another backend). One of `client` and `source`. */
  source?: BoardSource;
  /** Flow runs to list and draw (default with `client`: the namespace's flow runs; without either, none). */
  flows?: BoardFlowSource;
  /** Agent modules the replay check replays a session's history against (without them: no replay check). */
  agents?: string[];
  /** The workers' transcript store, to show offloaded payloads in audits. */
  store?: TranscriptStore;
  /** Read live replies from the broker the workers publish to (`liveBroker({ url })`; closing it is the caller's). */
  broker?: LiveBrokerClient;
  /** Default 127.0.0.1. Another address needs `allowRemote: true`. */
  host?: string;
  port?: number;
  allowRemote?: boolean;
  /** Default: a random one (24 bytes). At least 16 characters. */
  token?: string;
  /**
   * The URL(s) the board is reached at, when not its bind address: `http://<this machine's IP or name>:<port>`,
   * or a proxy's. Their Host and Origin are accepted besides the bind address's (see docs/board.md).
   */
  publicUrl?: string | readonly string[];
}

export async function board(options: BoardOptions): Promise<BoardServer> {
  const source = options.source ?? (options.client ? temporalBoardSource(options.client, { agents: options.agents, store: options.store, ...(options.broker ? { broker: options.broker } : {}) }) : undefined);
  if (!source) throw new TypeError('board: pass a client (or a source)');
  const flows = options.flows ?? (options.client ? temporalFlowSource(options.client) : undefined);
  return startBoardServer({
    source,
    ...(flows ? { flows } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.allowRemote !== undefined ? { allowRemote: options.allowRemote } : {}),
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {}),
  });
}

export { BoardBindError, type BoardServer } from './server';
export { temporalBoardSource, ReplayUnavailableError, type BoardSource, type BoardEnvelope, type BoardSubAgent, type InboxRow, type InboxFilter, type SessionView, type BoardAction } from './source';
export type { ContextGauge, GaugeLayer } from './gauge';
export { temporalFlowSource, FlowNotFoundError, type BoardFlowSource, type FlowRow, type GateBody } from './flow-source';
export type { FlowView, FlowViewNode, FlowViewEdge, BoardNodeState } from './flow-view';
