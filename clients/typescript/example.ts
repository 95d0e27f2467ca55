// A tiny app on the generated types: submit a photo job, long-poll it to the end, read the result.
// `tsc --noEmit` checks it against schema.d.ts (tests/webapp/api/test_generated_typescript_client.py).
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Job = components["schemas"]["Job"];
type Problem = components["schemas"]["Problem"];

export async function swap(baseUrl: string, token: string, source: Blob, target: Blob): Promise<string> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

  const form = new FormData();
  form.append("source", source, "me.png");
  form.append("target", target, "photo.jpg");
  form.append("consent", "true");
  const created = await api.POST("/api/v1/jobs", {
    // multipart: the body is sent as built (the generated type says which fields exist)
    body: form as unknown as components["schemas"]["JobCreateRequest"],
    bodySerializer: (body) => body as unknown as FormData,
  });
  if (created.error) throw new Error(describe(created.error));
  let job: Job = created.data;

  while (!job.terminal) {
    const polled = await api.GET("/api/v1/jobs/{job_id}", {
      params: { path: { job_id: job.id }, query: { wait: 30, until: "final" } },
    });
    if (polled.error) throw new Error(describe(polled.error));
    if (polled.data) job = polled.data; // a 304 has no body: ask again
  }
  if (job.state !== "succeeded" || job.result === null || job.result.url === null) {
    throw new Error(job.error ? `${job.error.code}: ${job.error.message}` : `the job ended ${job.state}`);
  }
  const cost = job.cost ? `${job.cost.paid ?? job.cost.price} ${job.cost.unit}` : "nothing";
  console.log(`done in ${job.metrics.wall_seconds ?? "?"} s, ${cost}; queue was ${job.queue?.position ?? "-"}`);
  return job.result.url;
}

function describe(problem: Problem): string {
  const fields = Object.entries(problem.errors ?? {}).map(([field, messages]) => `${field}: ${messages.join(" ")}`);
  return [`${problem.code} (${problem.status}): ${problem.detail}`, ...fields].join("\n");
}
