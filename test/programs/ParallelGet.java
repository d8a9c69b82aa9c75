// ParallelGet.java — a JVM host: java.net.http.HttpClient fetches URL N times at once and prints each body's length and CRC32.
// Run from source (JDK 11+): java ParallelGet.java URL N
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32;

public class ParallelGet {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: java ParallelGet.java URL N");
      System.exit(2);
    }
    URI uri = URI.create(args[0]);
    int n = Integer.parseInt(args[1]);
    // HTTP/1.1: one TCP connection per request, so N flows move at once on the client's threads.
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    List<CompletableFuture<HttpResponse<byte[]>>> all = new ArrayList<>();
    for (int i = 0; i < n; i++)
      all.add(client.sendAsync(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofByteArray()));
    int failed = 0;
    for (CompletableFuture<HttpResponse<byte[]>> f : all) {
      HttpResponse<byte[]> r = f.get();
      CRC32 crc = new CRC32();
      crc.update(r.body());
      System.out.printf("%d %d %08x%n", r.statusCode(), r.body().length, crc.getValue());
      if (r.statusCode() != 200) failed++;
    }
    System.exit(failed == 0 ? 0 : 1);
  }
}
