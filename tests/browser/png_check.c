/* png_check FILE MIN_COLOURS — exit 0 when the PNG decodes and holds at least
 * MIN_COLOURS distinct colours in its pixels (a rendered picture, not a blank
 * page), 1 when it does not, 2 when it cannot be read. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: png_check FILE MIN_COLOURS\n");
    return 2;
  }
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, argv[1])) {
    fprintf(stderr, "png_check: %s: %s\n", argv[1], image.message);
    return 2;
  }
  image.format = PNG_FORMAT_RGB;
  const size_t size = PNG_IMAGE_SIZE(image);
  unsigned char* pixels = malloc(size);
  if (pixels == NULL || !png_image_finish_read(&image, NULL, pixels, 0, NULL)) {
    fprintf(stderr, "png_check: %s: %s\n", argv[1], pixels ? image.message : "out of memory");
    free(pixels);
    return 2;
  }
  /* Distinct colours, counted in a bitmap of 2^24 entries. */
  unsigned char* seen = calloc(1u << 21, 1);
  unsigned long distinct = 0;
  for (size_t i = 0; seen != NULL && i + 2 < size; i += 3) {
    const unsigned rgb = (unsigned)pixels[i] << 16 | (unsigned)pixels[i + 1] << 8 | pixels[i + 2];
    if (!(seen[rgb >> 3] & (1u << (rgb & 7)))) {
      seen[rgb >> 3] |= (unsigned char)(1u << (rgb & 7));
      ++distinct;
    }
  }
  free(seen);
  free(pixels);
  const unsigned long want = strtoul(argv[2], NULL, 10);
  printf("png_check: %s: %ux%u, %lu distinct colours (want at least %lu)\n", argv[1], image.width, image.height,
         distinct, want);
  return distinct >= want ? 0 : 1;
}
