package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LoopbackAddressesTest {
    private final List<FakeEngine> engines = new ArrayList<>();
    private final List<URLClassLoader> loaders = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        engines.forEach(FakeEngine::close);
        for (URLClassLoader loader : loaders) {
            loader.close();
        }
    }

    /**
     * The class as a Quarkus test has it, loaded again by a class loader of its own with statics of its own; another
     * JVM on the machine starts over the same way.
     */
    private Supplier<String> addressesOfAnotherClassLoader() throws Exception {
        URL classes =
                LoopbackAddresses.class.getProtectionDomain().getCodeSource().getLocation();
        URLClassLoader loader = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader());
        loaders.add(loader);
        Class<?> copy = loader.loadClass(LoopbackAddresses.class.getName());
        assertThat(copy).isNotSameAs(LoopbackAddresses.class);
        Object addresses = copy.getConstructor().newInstance();
        Method next = copy.getMethod("next");
        return () -> {
            try {
                return (String) next.invoke(addresses);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    @Test
    void worldsInDifferentClassLoadersStartTheirEnginesOnTheSamePortSideBySide() throws Exception {
        Supplier<String> quarkusTest = addressesOfAnotherClassLoader();
        Supplier<String> laterQuarkusTest = addressesOfAnotherClassLoader();
        LoopbackAddresses plainTest = new LoopbackAddresses();
        List<String> handedOut = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            handedOut.addAll(List.of(quarkusTest.get(), laterQuarkusTest.get(), plainTest.next()));
        }

        for (String address : handedOut) {
            engines.add(FakeEngine.start(Engine.VLLM, address, 8000, "m"));
        }

        assertThat(handedOut)
                .doesNotHaveDuplicates()
                .allSatisfy(address -> assertThat(address).startsWith("127.0."));
        assertThat(engines).hasSize(9);
    }
}
