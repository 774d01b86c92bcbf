/** Where a worker's execution context comes from; it throws where there is none (the Bun tier). */
export type ExecutionContextOf = () => { waitUntil(promise: Promise<unknown>): void };

/**
 * Lets `task` run after the response where the worker has an execution
 * context (`waitUntil`), and awaits it where there is none (the Bun tier:
 * `executionCtx` throws). The task handles its own failure.
 */
export async function afterResponse(executionCtx: ExecutionContextOf, task: Promise<unknown>): Promise<void> {
  let ctx: ReturnType<ExecutionContextOf> | undefined;
  try {
    ctx = executionCtx();
  } catch {
    ctx = undefined;
  }
  if (ctx) ctx.waitUntil(task);
  else await task;
}
