/**
 * The Models API's capabilities as the fake Anthropic server declares them per model, and the check
 * that refuses a request using a feature its model declares unsupported.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { isObj } from './fake-anthropic-blocks';
import type { ContextEditType } from './fake-anthropic-context-edits';

/** What a fake model declares it supports; everything not listed is unsupported. */
export interface FakeCapabilities {
  /** Thinking types the model accepts (ThinkingTypes). `true` = enabled, disabled and adaptive. */
  thinking?: boolean | Array<'enabled' | 'disabled' | 'adaptive' | 'between_tools'>;
  /** Context-management strategies the model supports (ContextManagementCapability). */
  contextManagement?: ContextEditType[];
  batch?: boolean;
  citations?: boolean;
  imageInput?: boolean;
  pdfInput?: boolean;
  structuredOutputs?: boolean;
}

/** The full ModelCapabilities object (the API always sends every key) for a declaration. */
export function modelCapabilities(c: FakeCapabilities): Anthropic.ModelCapabilities {
  const s = (supported: boolean | undefined) => ({ supported: supported === true });
  const thinkingTypes = c.thinking === true ? ['enabled', 'disabled', 'adaptive'] : Array.isArray(c.thinking) ? c.thinking : [];
  const cm = c.contextManagement ?? [];
  return {
    batch: s(c.batch),
    citations: s(c.citations),
    code_execution: s(false),
    context_management: {
      supported: cm.length > 0,
      clear_thinking_20251015: s(cm.includes('clear_thinking_20251015')),
      clear_tool_uses_20250919: s(cm.includes('clear_tool_uses_20250919')),
      compact_20260112: s(cm.includes('compact_20260112')),
    },
    effort: { supported: false, low: s(false), medium: s(false), high: s(false), max: s(false), xhigh: null },
    image_input: s(c.imageInput),
    pdf_input: s(c.pdfInput),
    server_tools: { supported: false, code_execution: s(false), web_search: s(false) },
    structured_outputs: s(c.structuredOutputs),
    thinking: {
      supported: thinkingTypes.length > 0,
      types: {
        enabled: s(thinkingTypes.includes('enabled')),
        disabled: s(thinkingTypes.includes('disabled') || thinkingTypes.length > 0),
        adaptive: s(thinkingTypes.includes('adaptive')),
        between_tools: s(thinkingTypes.includes('between_tools')),
      },
    },
  };
}

/**
 * A request using a feature its model declares unsupported. The API rejects these; the wording is ours
 * (we have no verbatim sample). Only models with declared capabilities are checked.
 */
export function checkCapabilities(body: Record<string, any>, caps: Anthropic.ModelCapabilities): string | undefined {
  const t = body.thinking;
  if (isObj(t) && t.type !== 'disabled') {
    const types = caps.thinking.types as unknown as Record<string, { supported: boolean } | undefined>;
    if (!types[t.type]?.supported) return `thinking.type: '${t.type}' is not supported by model ${body.model}`;
  }
  const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
  for (let i = 0; i < edits.length; i++) {
    const supported = (caps.context_management as unknown as Record<string, { supported: boolean } | null>)[edits[i].type];
    if (!supported?.supported) return `context_management.edits.${i}: '${edits[i].type}' is not supported by model ${body.model}`;
  }
  return undefined;
}
