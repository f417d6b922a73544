package dev.ebb.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** Numbers read back from labels and annotations, which anyone with access to a Pod may have edited. */
class LabelsTest {
    @ParameterizedTest
    @CsvSource({"0, 0", "7, 7", "007, 7", "999999999, 999999999"})
    void plainDecimalDigitsAreRead(String value, int expected) {
        assertThat(Labels.number(value)).hasValue(expected);
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(
            strings = {
                "-1",
                "+1",
                " 1",
                "1 ",
                "1e3",
                "0x10",
                "1.0",
                "1000000000",
                "99999999999999999999",
                "\u0661",
                "3; rm -rf /"
            })
    void anythingElseIsNoNumber(String value) {
        assertThat(Labels.number(value)).isEqualTo(Optional.empty());
    }
}
