package dev.ebb.operator.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.drain.DrainHook;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Whatever a string holds, the sharing reader reads it as Jackson's own does; only the hook's exact text is shared. */
class SharedHookTextProperties {
    private static final ObjectMapper PLAIN = new ObjectMapper();
    private static final ObjectMapper SHARING = SharedHookTextTest.sharingMapper();

    @Property(tries = 300)
    void everyStringReadsAsItWasWritten(@ForAll("strings") String text) throws Exception {
        String json = PLAIN.writeValueAsString(List.of(text, DrainHook.SCRIPT));

        List<?> read = SHARING.readValue(json, List.class);
        List<String> typed =
                SHARING.readValue(json, SHARING.getTypeFactory().constructCollectionType(List.class, String.class));

        assertThat(read).isEqualTo(PLAIN.readValue(json, List.class));
        assertThat(typed).containsExactly(text, DrainHook.SCRIPT);
        assertThat(typed.get(1)).isSameAs(DrainHook.SCRIPT);
        assertThat(typed.get(0) == DrainHook.SCRIPT).isEqualTo(text.equals(DrainHook.SCRIPT));
    }

    /** Any characters (escapes, surrogates, control characters), and the hook's own text with one character changed. */
    @Provide
    Arbitrary<String> strings() {
        Arbitrary<String> edited = Arbitraries.integers()
                .between(0, DrainHook.SCRIPT.length() - 1)
                .flatMap(at -> Arbitraries.chars()
                        .map(c -> DrainHook.SCRIPT.substring(0, at) + c + DrainHook.SCRIPT.substring(at + 1)));
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(64), edited, Arbitraries.just(DrainHook.SCRIPT));
    }
}
