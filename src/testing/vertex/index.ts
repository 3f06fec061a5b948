export { FakeVertexServer, FAKE_VERTEX_ANTHROPIC_VERSION, type FakeVertexOptions } from './fake-vertex';
