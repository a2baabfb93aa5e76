// The files browser.ts imports through esbuild's `file` loader: each import gives the file's URL.
declare module '*.wasm' {
  const url: string;
  export default url;
}
declare module '*.vocab' {
  const url: string;
  export default url;
}
