/**
 * The FLOOR: the least any Temporal workflow pays per step: N sequential no-op activities, no state, no
 * payload beyond the step number. The cost per model call of an agent workflow is compared with this.
 */
const { proxyActivities } = require('@temporalio/workflow');

// Same timeouts/retries as the harness's model and tool activities.
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 10 };
const { noop, noopTool, floorModel, floorGrow } = proxyActivities({ startToCloseTimeout: '10 minutes', retry });

/**
 * input: { calls, withTool?, withModel? }. With `withTool`, each step is two no-op activities, like one
 * model call and one tool call of ours: the floor for the same number of activities per model call.
 * With `withModel`, the two activities do the least real work of an agent instead
 * (floor-model-activities.js): the model call through the Anthropic SDK, and the tool's text.
 */
async function floorWorkflow(input) {
  if (input.withModel) {
    for (let step = 1; ; step++) {
      const next = await floorModel({ calls: input.calls });
      if (next.done) return { steps: step };
      await floorGrow({ calls: input.calls, step: next.step, toolUseId: next.toolUseId });
    }
  }
  for (let step = 1; step <= input.calls; step++) {
    await noop(step);
    if (input.withTool && step < input.calls) await noopTool(step);
  }
  return { steps: input.calls };
}

module.exports = { floorWorkflow };
