#!/usr/bin/env node
// Placeholder: the CLI lands with issue 18.
process.stderr.write("htask: not built yet\n");
process.exit(2);
