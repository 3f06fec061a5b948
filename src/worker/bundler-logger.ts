import { Runtime, type Logger, type LogLevel } from '@temporalio/worker';

const ORDER: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/**
 * The bundler's logger: the runtime's, from `level` up. The bundler logs webpack's whole build report
 * at INFO, which drowns a worker's startup; by default only warnings and errors get through.
 */
export function bundlerLogger(level: LogLevel = 'WARN'): Logger {
  const min = ORDER.indexOf(level);
  const target = (): Logger => Runtime.instance().logger;
  const at =
    (l: LogLevel) =>
    (message: string, meta?: Record<string, unknown>): void => {
      if (ORDER.indexOf(l) >= min) target().log(l, message, meta);
    };
  return {
    log: (l, message, meta) => at(l)(message, meta),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
}
