/**
 * `npm run bench` arguments: bench names to run (none: all), `--profile`, and `--compare <dir>` / `--compare=<dir>`
 * (or `BENCH_COMPARE=<dir>`), the checkout of another commit to measure back to back with this one.
 */
export type BenchArgs = { only: string[]; profile: boolean; compareDir: string | undefined }

export function benchArgs(args: string[], env: Record<string, string | undefined>): BenchArgs {
  const at = args.findIndex((a) => a === '--compare' || a.startsWith('--compare='))
  const inline = at >= 0 && args[at]!.includes('=')
  const given = at < 0 ? undefined : inline ? args[at]!.slice('--compare='.length) : args[at + 1]
  if (at >= 0 && (!given || given.startsWith('-'))) throw new Error('--compare needs a directory: npm run bench -- --compare /path/to/checkout')
  return {
    only: args.filter((a, i) => !a.startsWith('-') && !(at >= 0 && !inline && i === at + 1)),
    profile: args.includes('--profile'),
    compareDir: given ?? (env.BENCH_COMPARE || undefined),
  }
}
