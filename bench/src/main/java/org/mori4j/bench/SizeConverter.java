package org.mori4j.bench;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Picocli converter for size flags ({@code --buffer-size 64M}); picocli prefixes the message with the flag,
 * so an error reads "Invalid value for option '--buffer-size': not a size: 'x' ...".
 */
public final class SizeConverter implements ITypeConverter<Long> {
  @Override
  public Long convert(String value) {
    try {
      return HumanSize.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
