#!/usr/bin/env node
import { runCli } from './main.js'

const result = runCli(process.argv.slice(2), undefined, process.stderr)
process.stdout.write(result.stdout)
process.stderr.write(result.stderr)
process.exitCode = result.code
