package dev.ebb.operator.sim;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/** A throw-away certificate for a fake engine that serves TLS, made with the JDK's own keytool. */
public final class SelfSignedTls {
    private static final char[] PASSWORD = "changeit".toCharArray();

    private SelfSignedTls() {
    }

    public static SSLContext serverContext() throws IOException, GeneralSecurityException, InterruptedException {
        Path dir = Files.createTempDirectory("fake-engine-tls");
        Path store = dir.resolve("engine.p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "engine", "-keyalg", "RSA", "-keysize", "2048",
                "-dname", "CN=fake-engine", "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
                .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        if (p.waitFor() != 0) {
            throw new IOException("keytool failed");
        }
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, PASSWORD);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, PASSWORD);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        return context;
    }
}
