/**
 * What Gemini's generateContent / countTokens refuse, with the API's own words (400 INVALID_ARGUMENT):
 * no contents, an unknown role, an empty content or part, a function call or response out of place
 * (a response with no call to answer, or not one for each call), a function declaration with an
 * invalid name or JSON schema, bad thinking settings, and (Gemini 3) a function call of the current
 * turn sent back without the thought signature it came with. Also the fake's tokenizer for Gemini's
 * request shape (the Anthropic fake's, over the same parts of the request).
 */
import { createHash } from 'node:crypto';
import { countFakeTextTokens } from '../anthropic/fake-anthropic-validate';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];

/** Tokens of a request: its system instruction, tools and every content's parts, plus 4 per content and 8 per function. */
export function countGeminiTokens(body: { systemInstruction?: unknown; tools?: unknown; contents?: unknown }): number {
  let n = 0;
  if (body.systemInstruction !== undefined) n += countFakeTextTokens(JSON.stringify(body.systemInstruction));
  if (Array.isArray(body.tools)) {
    n += countFakeTextTokens(JSON.stringify(body.tools));
    for (const t of body.tools) n += 8 * (Array.isArray((t as Obj)?.functionDeclarations) ? (t as Obj).functionDeclarations.length : 0);
  }
  if (Array.isArray(body.contents)) for (const c of body.contents) n += 4 + countFakeTextTokens(JSON.stringify((c as Obj)?.parts ?? []));
  return n;
}

/** The fake's thought signature for a function call (deterministic, so a test can predict it). */
export function signFunctionCall(call: { name?: unknown; args?: unknown }): string {
  return Buffer.from(`fake-gemini-sig:${createHash('sha256').update(JSON.stringify([call.name, call.args ?? {}])).digest('hex').slice(0, 24)}`).toString('base64');
}

export interface ValidateGeminiOptions {
  /** Refuse a current-turn function call without the fake's signature (Gemini 3). Default true. */
  requireThoughtSignatures?: boolean;
}

/** The API's error message for the first thing it refuses in `body`, or undefined. */
export function validateGenerateContent(body: unknown, opts: ValidateGeminiOptions = {}): string | undefined {
  if (!isObj(body)) return 'Invalid JSON payload received. Expected an object.';
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified\n';
  for (const [i, c] of contents.entries()) {
    if (!isObj(c)) return `* GenerateContentRequest.contents[${i}]: must be an object\n`;
    if (c.role !== undefined && c.role !== 'user' && c.role !== 'model') return 'Please use a valid role: user, model.';
    if (!Array.isArray(c.parts) || c.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`;
    for (const [j, p] of c.parts.entries()) {
      if (!isObj(p) || !DATA_FIELDS.some((f) => p[f] !== undefined)) {
        return `* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field\n`;
      }
      if (p.functionCall !== undefined && (!isObj(p.functionCall) || typeof p.functionCall.name !== 'string' || !p.functionCall.name)) {
        return `* GenerateContentRequest.contents[${i}].parts[${j}].function_call.name: Name cannot be empty.\n`;
      }
      if (p.functionResponse !== undefined && (!isObj(p.functionResponse) || typeof p.functionResponse.name !== 'string' || !p.functionResponse.name)) {
        return `* GenerateContentRequest.contents[${i}].parts[${j}].function_response.name: Name cannot be empty.\n`;
      }
    }
  }
  return checkTurns(contents as Obj[]) ?? checkSignatures(contents as Obj[], opts) ?? checkTools(body.tools) ?? checkConfig(body.generationConfig);
}

const calls = (c: Obj | undefined): Obj[] => (c?.parts ?? []).filter((p: Obj) => p.functionCall).map((p: Obj) => p.functionCall);
const responses = (c: Obj | undefined): Obj[] => (c?.parts ?? []).filter((p: Obj) => p.functionResponse).map((p: Obj) => p.functionResponse);

/** Function calls come after a user turn or a response turn; responses answer the call turn just before, one for each call. */
function checkTurns(contents: Obj[]): string | undefined {
  for (const [i, c] of contents.entries()) {
    const prev = contents[i - 1];
    if (calls(c).length > 0 && c.role === 'model' && prev?.role === 'model') {
      return 'Please ensure that function call turn comes immediately after a user turn or after a function response turn.';
    }
    const answered = responses(c);
    if (answered.length === 0) continue;
    const asked = prev?.role === 'model' ? calls(prev) : [];
    if (asked.length === 0) return 'Please ensure that function response turn comes immediately after a function call turn.';
    if (answered.length !== asked.length) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    }
    for (const r of answered) {
      const match = asked.some((call) => call.name === r.name && (r.id === undefined || call.id === undefined || call.id === r.id));
      if (!match) return `Please ensure that function response turn comes immediately after a function call turn. No function call matches the response to \`${r.name}\`${r.id ? ` (id ${r.id})` : ''}.`;
    }
  }
  return undefined;
}

/**
 * Gemini 3: in the current turn (since the last user content that is not only function responses),
 * the first function call of each model content must carry the signature it came with.
 */
function checkSignatures(contents: Obj[], opts: ValidateGeminiOptions): string | undefined {
  if (opts.requireThoughtSignatures === false) return undefined;
  let start = 0;
  contents.forEach((c, i) => {
    if (c.role !== 'model' && (c.parts as Obj[]).some((p) => p.text !== undefined)) start = i;
  });
  for (let i = start; i < contents.length; i++) {
    const c = contents[i]!;
    if (c.role !== 'model') continue;
    const parts = c.parts as Obj[];
    const position = parts.findIndex((p) => p.functionCall);
    if (position < 0) continue;
    const first = parts[position]!;
    if (first.thoughtSignature === undefined) {
      return (
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. ` +
        `Additional data, function call \`default_api:${first.functionCall.name}\` , position ${position + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`
      );
    }
    if (first.thoughtSignature !== signFunctionCall(first.functionCall)) return 'Corrupted thought signature.';
  }
  return undefined;
}

function checkTools(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return '* GenerateContentRequest.tools: must be a list\n';
  for (const [i, t] of tools.entries()) {
    const decls = isObj(t) ? t.functionDeclarations : undefined;
    if (decls === undefined) continue;
    for (const [j, d] of (Array.isArray(decls) ? decls : []).entries()) {
      const at = `* GenerateContentRequest.tools[${i}].function_declarations[${j}]`;
      if (!isObj(d) || typeof d.name !== 'string' || !FUNCTION_NAME.test(d.name)) {
        return `${at}.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n`;
      }
      if (d.parameters !== undefined && d.parametersJsonSchema !== undefined) {
        return `${at}: parameters and parameters_json_schema are mutually exclusive. Please set only one of them.\n`;
      }
      const schemaError = d.parametersJsonSchema === undefined ? undefined : checkSchema(d.parametersJsonSchema, `${at}.parameters_json_schema`);
      if (schemaError) return schemaError;
    }
  }
  return undefined;
}

function checkSchema(schema: unknown, at: string): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (!isObj(schema)) return `${at}: Invalid JSON schema: must be an object or a boolean.\n`;
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  for (const t of types) if (typeof t !== 'string' || !JSON_TYPES.has(t)) return `${at}.type: Invalid JSON schema: unknown type ${JSON.stringify(t)}.\n`;
  if (schema.properties !== undefined) {
    if (!isObj(schema.properties)) return `${at}.properties: Invalid JSON schema: properties must be an object.\n`;
    for (const [k, v] of Object.entries(schema.properties)) {
      const inner = checkSchema(v, `${at}.properties[${k}]`);
      if (inner) return inner;
    }
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required)) return `${at}.required: Invalid JSON schema: required must be a list.\n`;
    for (const [k, r] of schema.required.entries()) {
      if (typeof r !== 'string' || !isObj(schema.properties) || !(r in schema.properties)) return `${at}.required[${k}]: property is not defined\n`;
    }
  }
  if (schema.items !== undefined) return checkSchema(schema.items, `${at}.items`);
  return undefined;
}

function checkConfig(config: unknown): string | undefined {
  if (config === undefined) return undefined;
  if (!isObj(config)) return '* GenerateContentRequest.generation_config: must be an object\n';
  const max = config.maxOutputTokens;
  if (max !== undefined && !(Number.isInteger(max) && max >= 1)) return `* GenerateContentRequest.generation_config.max_output_tokens: must be a positive integer, got ${JSON.stringify(max)}\n`;
  const thinking = config.thinkingConfig;
  if (thinking !== undefined) {
    if (!isObj(thinking)) return '* GenerateContentRequest.generation_config.thinking_config: must be an object\n';
    const budget = thinking.thinkingBudget;
    if (budget !== undefined && !(Number.isInteger(budget) && budget >= -1)) return `* GenerateContentRequest.generation_config.thinking_config.thinking_budget: invalid value ${JSON.stringify(budget)}\n`;
    if (thinking.includeThoughts !== undefined && typeof thinking.includeThoughts !== 'boolean') {
      return '* GenerateContentRequest.generation_config.thinking_config.include_thoughts: must be a boolean\n';
    }
  }
  return undefined;
}
