/** Flows (pure): the typed graph, validation, conditions, context rules, fidelity and preambles. */
export * from './graph';
export * from './errors';
export * from './conditions';
export * from './context';
export * from './fidelity';
export * from './preamble';
export * from './stage';
export * from './engine';
export { validateFlow, fanInFor } from './validate';
export * from './events';
