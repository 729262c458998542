"""Writes the image-op fixtures beside this file with TensorFlow (2.x,
tf.compat.v1 semantics): images TensorFlow encoded, the tensors its
decoders return for them, and resize / crop / contrast outputs and
gradients. Run with a Python that has tensorflow:
  python3 ops/image/testdata/make_fixtures.py
The C++ tests (ops/image/image_ops_test.cc) read the .npy files."""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array):
    np.save(os.path.join(HERE, name + ".npy"), np.ascontiguousarray(array))


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# A smooth RGB picture with some edges: 24 x 32.
h, w = 24, 32
yy, xx = np.mgrid[0:h, 0:w]
rgb = np.stack([(xx * 8) % 256, (yy * 10) % 256, ((xx + yy) * 5) % 256], -1).astype(np.uint8)
rgb[8:12, 10:20] = [250, 20, 30]
jpeg = tf.io.encode_jpeg(rgb, quality=90).numpy()
write("rgb.jpg", jpeg)
save("rgb_jpg_decoded", tf.io.decode_jpeg(jpeg).numpy())
save("rgb_jpg_gray", tf.io.decode_jpeg(jpeg, channels=1).numpy())
save("rgb_jpg_ratio2", tf.io.decode_jpeg(jpeg, ratio=2).numpy())
save("rgb_jpg_nofancy", tf.io.decode_jpeg(jpeg, fancy_upscaling=False).numpy())
save("rgb_jpg_float", tf.io.decode_image(jpeg, dtype=tf.float32).numpy())

png = tf.io.encode_png(rgb[:5, :4]).numpy()
write("rgb.png", png)
save("rgb_png_decoded", tf.io.decode_png(png).numpy())
save("rgb_png_rgba", tf.io.decode_png(png, channels=4).numpy())
rgba16 = ((np.arange(5 * 4 * 4).reshape(5, 4, 4) * 3001) % 65536).astype(np.uint16)
png16 = tf.io.encode_png(rgba16).numpy()
write("rgba16.png", png16)
save("rgba16_png_decoded", tf.io.decode_png(png16, dtype=tf.uint16).numpy())
save("rgba16_png_as8", tf.io.decode_png(png16).numpy())
gray = (np.arange(12).reshape(3, 4, 1) * 20).astype(np.uint8)
write("gray.png", tf.io.encode_png(gray).numpy())
save("gray_png_rgb", tf.io.decode_png(tf.io.encode_png(gray), channels=3).numpy())

# ResizeBilinear forward and gradient.
rng = np.random.RandomState(3)
x = rng.uniform(-1, 1, (2, 4, 5, 2)).astype(np.float32)
save("resize_in", x)
wts = rng.uniform(-1, 1, (2, 3, 7, 2)).astype(np.float32)
save("resize_w", wts)
for name, ac, hp in [("plain", False, False), ("align", True, False), ("half", False, True)]:
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.compat.v1.image.resize_bilinear(xt, [3, 7], align_corners=ac,
                                               half_pixel_centers=hp)
        loss = tf.reduce_sum(y * wts)
    save("resize_" + name, y.numpy())
    save("resize_grad_" + name, tape.gradient(loss, xt).numpy())
save("resize_uint8_half",
     tf.compat.v1.image.resize_bilinear(tf.constant((x * 100 + 120).astype(np.uint8)),
                                        [6, 3], half_pixel_centers=True).numpy())
save("resize_uint8_in", (x * 100 + 120).astype(np.uint8))

# CropAndResize forward and gradients.
img = rng.uniform(-1, 1, (2, 5, 6, 2)).astype(np.float32)
boxes = np.array([[0.1, 0.2, 0.8, 0.9], [-0.1, 0.5, 1.2, 0.7], [0.3, 0.3, 0.3, 0.3],
                  [0.9, 0.8, 0.2, 0.1]], np.float32)
box_ind = np.array([0, 1, 1, 0], np.int32)
save("crop_image", img)
save("crop_boxes", boxes)
save("crop_box_ind", box_ind)
cw = rng.uniform(-1, 1, (4, 3, 4, 2)).astype(np.float32)
save("crop_w", cw)
for method in ["bilinear", "nearest"]:
    it, bt = tf.constant(img), tf.constant(boxes)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([it, bt])
        y = tf.image.crop_and_resize(it, bt, box_ind, [3, 4], method=method,
                                     extrapolation_value=0.5)
        loss = tf.reduce_sum(y * cw)
    save("crop_" + method, y.numpy())
    if method == "bilinear":
        save("crop_grad_image", tape.gradient(loss, it).numpy())
        save("crop_grad_boxes", tape.gradient(loss, bt).numpy())

# AdjustContrastv2.
c = rng.uniform(0, 1, (2, 3, 4, 3)).astype(np.float32)
save("contrast_in", c)
save("contrast_out", tf.image.adjust_contrast(c, 1.7).numpy())
