// A stand-in for the service in the plugin's tests (not a test file itself: `*.test.js` are): an HTTP server
// on a free port whose answers a test writes, for what the live service cannot be made to do on cue.
import { createServer } from "node:http";

/** A stand-in service on a free port: `answer(method, url, body)` gives a JSON answer ({status, body} for
 * another status than 200), or a promise of one. */
export async function standIn(answer) {
  const server = createServer(async (request, response) => {
    let text = "";
    for await (const part of request) text += part;
    const url = new URL(request.url, "http://stand-in");
    const given = await answer(request.method, url, text ? JSON.parse(text) : undefined);
    const { status, body } = typeof given?.status === "number" && "body" in given ? given : { status: 200, body: given };
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
