// node_get.js — a Node.js host: http.get URL with libuv's event loop, printing the status, the body's length and its SHA-256.
// Usage: node node_get.js URL
const http = require("http");
const crypto = require("crypto");

const url = process.argv[2];
if (!url) {
  console.error("usage: node node_get.js URL");
  process.exit(2);
}
http
  .get(url, (res) => {
    const hash = crypto.createHash("sha256");
    let length = 0;
    res.on("data", (chunk) => {
      hash.update(chunk);
      length += chunk.length;
    });
    res.on("end", () => {
      console.log(`${res.statusCode} ${length} ${hash.digest("hex")}`);
      process.exit(res.statusCode === 200 ? 0 : 1);
    });
  })
  .on("error", (err) => {
    console.error(`node_get: ${err.message}`);
    process.exit(1);
  });
