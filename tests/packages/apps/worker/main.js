import { failure, palettesUrl, show } from "../shared.js";

// The module worker makes the read; the page only shows what it posts back.
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
worker.onmessage = ({ data }) => show(data);
worker.onerror = (event) => show(failure(new Error(`the worker failed: ${event.message}`)));
worker.postMessage(palettesUrl(location.search));
