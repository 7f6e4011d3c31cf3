/** `npm start`: the reference data-access server. See README.md and `--help`. */
import { main } from './cli.js'

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
