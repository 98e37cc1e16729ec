// One test pass's summary for CI (.ci/run and scripts/ci-node24.sh), from vitest's JSON report.
// Usage: node scripts/ci-summary.mjs REPORT LABEL [COUNTS]
// Prints "LABEL: N passed, N failed, N skipped". With COUNTS, writes "passed failed skipped" to it
// and the failed tests, one "FAILED (LABEL): file > test" line each, to COUNTS.failed, which
// .ci/run repeats just before its closing line (a log cut to its tail still names them).
// A report that cannot be read counts as one failure, and the script exits 1.
import { readFileSync, writeFileSync } from 'node:fs';

const [reportPath, label, countsPath] = process.argv.slice(2);
if (!reportPath || !label) {
  process.stderr.write('usage: node scripts/ci-summary.mjs REPORT LABEL [COUNTS]\n');
  process.exit(2);
}

function write(passed, failed, skipped, failedLines) {
  process.stdout.write(`${label}: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  if (!countsPath) return;
  writeFileSync(countsPath, `${passed} ${failed} ${skipped}\n`);
  writeFileSync(`${countsPath}.failed`, failedLines.join(''));
}

let report;
try {
  report = JSON.parse(readFileSync(reportPath, 'utf8'));
} catch (err) {
  process.stderr.write(`${label}: no readable test report at ${reportPath} (${err.message})\n`);
  write(0, 1, 0, [`FAILED (${label}): the test run wrote no readable report\n`]);
  process.exit(1);
}

const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
const root = `${process.cwd()}/`;
const failedLines = report.testResults.flatMap((file) =>
  file.assertionResults.filter((test) => test.status === 'failed').map((test) => `FAILED (${label}): ${file.name.replace(root, '')} > ${test.fullName}\n`),
);
// A file that failed outside its tests (an import error, a hook) has no failed test to name: it is
// named, and counted as one failure, on its own.
const brokenFiles = report.testResults.filter((file) => file.status === 'failed' && !file.assertionResults.some((test) => test.status === 'failed'));
for (const file of brokenFiles) {
  const why = (file.message || 'the file failed').split('\n')[0];
  failedLines.push(`FAILED (${label}): ${file.name.replace(root, '')} (${why})\n`);
}
write(report.numPassedTests, report.numFailedTests + brokenFiles.length, skipped, failedLines);
