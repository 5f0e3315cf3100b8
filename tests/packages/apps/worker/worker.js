import init, { fetchWithBudget } from "retry-budget";
import { failure, summary } from "../shared.js";

self.onmessage = async ({ data: url }) => {
  try {
    await init();
    self.postMessage(summary(await fetchWithBudget(url)));
  } catch (error) {
    self.postMessage(failure(error));
  }
};
