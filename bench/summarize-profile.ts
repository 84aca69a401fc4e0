// node bench/summarize-profile.ts <file.cpuprofile>…: the same summary `npm run bench -- --profile` prints.
import { summarizeProfile } from "./lib/cpu-profile.ts";

for (const file of process.argv.slice(2)) {
  const summary = summarizeProfile(file);
  process.stdout.write(
    `\n${file}: busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.sampledMs / 1000).toFixed(1)} s sampled\n`,
  );
  for (const l of summary.layers.slice(0, 14)) {
    process.stdout.write(`  ${l.busyPercent.toFixed(1).padStart(5)}%  ${l.layer}\n`);
  }
  process.stdout.write("  top functions by self time (share of busy time):\n");
  for (const f of summary.functions) {
    process.stdout.write(`  ${f.busyPercent.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}\n`);
  }
}
