/** Compaction quality without a model: scripted sessions, strategies, and what survives them. Pure. */
export { generateSession, truthAt, pathsOf, STANDING_INSTRUCTIONS, DEFAULT_MODEL_CALLS, DOCS_TAIL_CALLS, type ScriptedSession, type ScriptedSessionOptions, type SessionTruth, type OpenError, type Evidence, type TruthCheckpoint } from './session';
export { survival, visibleText, type Survival } from './score';
export { makeStrategy, clearToolUses, STRATEGIES, CLEARED_TOOL_RESULT, SERVER_KEEP_TOOL_USES, type StrategyName, type ContextStrategy, type CallPlan } from './strategies';
export { runStrategy, compareStrategies, evalSettings, EVAL_CONTEXT_WINDOW_TOKENS, EVAL_SYSTEM_PROMPT, EVAL_TOOLS, type EvalOptions, type StrategyReport } from './run';
export { seededRandom, type Random } from './random';
export { InvalidEvalOptionsError } from './errors';
export { runGateEval, compareGate, SUMMARISERS, PROBES, type GateEvalReport, type SummariserName, type ProbeName, type Tally } from './gate-eval';
