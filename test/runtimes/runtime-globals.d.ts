// The slices of the Bun and Deno globals the runtime apps use; the full types are not installed.
declare const Bun: {
  serve(options: {
    fetch: (request: Request, server: unknown) => Response | Promise<Response>
    port: number
    hostname: string
  }): { readonly port: number }
}
declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: (address: { port: number }) => void },
    handler: (request: Request, info: unknown) => Response | Promise<Response>,
  ): unknown
}
