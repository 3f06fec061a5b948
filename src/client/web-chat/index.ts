export { sessionChatHandler, type SessionChatHandler, type SessionChatHandlerOptions } from './handler';
export { toNodeHandler } from './node';
export { turnChunks, type OffsetChunk, type TurnChunksOptions } from './chunks';
export { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from './protocol';
