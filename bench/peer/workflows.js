/**
 * The PEER: the same growing conversation written the way Temporal's own AI SDK integration
 * (@temporalio/ai-sdk, from this folder's node_modules) documents it: `generateText` in workflow code
 * with `temporalProvider`, each model call an `invokeModel` activity that the plugin registers, the
 * tool's `execute` an activity of ours (as in the integration's own tool example). The conversation,
 * system prompt, tool, first message and model are the ones the grower agent uses.
 *
 * Workflow code: bundled with AiSdkPlugin (its bundler hook installs the Web API polyfills `ai` needs).
 */
const { generateText, isStepCount, tool } = require('ai');
const { z } = require('zod');
const { proxyActivities } = require('@temporalio/workflow');
const { temporalProvider } = require('@temporalio/ai-sdk/workflow');

// Same timeouts/retries as the harness's tool activity.
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 10 };
const { grow } = proxyActivities({ startToCloseTimeout: '10 minutes', retry });

/** input: { calls, model, maxTokens, system, prompt, toolDescription } */
async function peerAgent(input) {
  const result = await generateText({
    model: temporalProvider.languageModel(input.model),
    instructions: input.system,
    prompt: input.prompt,
    maxOutputTokens: input.maxTokens,
    tools: {
      grow: tool({
        description: input.toolDescription,
        inputSchema: z.object({ step: z.number().int().nonnegative() }),
        execute: ({ step }) => grow({ step }),
      }),
    },
    // The fake says done at call N; this only keeps a misbehaving run from looping forever.
    stopWhen: isStepCount(input.calls + 1),
  });
  return { reply: result.text, modelCalls: result.steps.length };
}

module.exports = { peerAgent };
