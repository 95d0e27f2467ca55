"""MediaPipe Face Mesh topology: which of its 468 points are which, shared by the mesh landmarker
(swap.face_landmarks.face_mesh) and the classical swapper's dense warp."""

from __future__ import annotations

import numpy as np

# The 468 -> 68 correspondence in wide use (iBUG 300-W order: jaw 0-16, brows 17-26, nose 27-35,
# eyes 36-47, outer lips 48-59, inner lips 60-67), e.g. in the MediaPipe-to-dlib ports of
# face-alignment tools. Mesh indices are the subject's right side first, as dlib's are.
MESH_TO_68 = np.array(
    [
        # jaw line, from the subject's right ear to the left ear through the chin (152)
        127, 234, 93, 132, 58, 136, 150, 176, 152, 400, 379, 365, 288, 361, 323, 454, 356,
        70, 63, 105, 66, 107,  # right brow, outer to inner
        336, 296, 334, 293, 300,  # left brow, inner to outer
        168, 197, 5, 4,  # nose bridge down to the tip
        75, 97, 2, 326, 305,  # nostrils and columella
        33, 160, 158, 133, 153, 144,  # right eye: outer corner, upper lid, inner corner, lower lid
        362, 385, 387, 263, 373, 380,  # left eye: inner corner, upper lid, outer corner, lower lid
        61, 39, 37, 0, 267, 269, 291, 405, 314, 17, 84, 181,  # outer lip, from the right corner
        78, 82, 13, 312, 308, 317, 14, 87,  # inner lip, from the right corner
    ],
    np.int64,
)  # fmt: skip


# Face Mesh regions (MediaPipe's face_mesh_connections): the lips' outer and inner contours, each
# eye's lid margin (16 points), and the face oval (36 points, the silhouette).
MESH_LIPS = np.array(
    [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 185, 40, 39, 37, 0, 267, 269, 270, 409,
     78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 191, 80, 81, 82, 13, 312, 311, 310, 415],
    np.int64,
)  # fmt: skip
# The inner lip line between the corners (78, 308): each upper lip point above the lower lip's at
# the same index.
MESH_UPPER_INNER_LIP = np.array([191, 80, 81, 82, 13, 312, 311, 310, 415], np.int64)
MESH_LOWER_INNER_LIP = np.array([95, 88, 178, 87, 14, 317, 402, 318, 324], np.int64)
MESH_RIGHT_EYE = np.array(
    [33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173], np.int64
)
MESH_LEFT_EYE = np.array(
    [263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384, 398], np.int64
)
# Each brow's outline: its upper edge from the outer end in (the 68 points' brow), then its lower
# edge back out (MediaPipe's FACEMESH_RIGHT_EYEBROW / FACEMESH_LEFT_EYEBROW).
MESH_RIGHT_BROW = np.array([70, 63, 105, 66, 107, 55, 65, 52, 53, 46], np.int64)
MESH_LEFT_BROW = np.array([300, 293, 334, 296, 336, 285, 295, 282, 283, 276], np.int64)
MESH_FACE_OVAL = np.array(
    [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377,
     152, 148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109],
    np.int64,
)  # fmt: skip

# Each mesh point's mirror image across the face's midline (the subject's right eye's outer corner 33
# <-> the left's 263; the 28 points on the midline map to themselves). Found by running the mesh on
# six frontal portraits (the astronaut and ../shared/faces) and on their mirror images, and pairing
# the points by one assignment over the summed distances (scipy's linear_sum_assignment), made
# symmetric: an involution, every pair within 1.5 % of the face's size of its mirror on average.
MESH_MIRROR = np.array(
    [
     0, 1, 2, 248, 4, 5, 6, 249, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
     250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269,
     270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289,
     290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309,
     310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 94, 324, 325, 326, 327, 328,
     329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341, 342, 343, 344, 345, 346, 347, 348,
     349, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368,
     369, 370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 151, 152, 380, 381, 382, 383, 384, 385, 386,
     387, 388, 389, 390, 164, 391, 392, 393, 168, 394, 395, 396, 397, 398, 399, 175, 400, 401, 402, 403,
     404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 195, 419, 197, 420, 199,
     200, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439,
     440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459,
     460, 461, 462, 463, 464, 465, 466, 467, 3, 7, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
     30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49,
     50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69,
     70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,
     90, 91, 92, 93, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110,
     111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130,
     131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150,
     153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 165, 166, 167, 169, 170, 171, 172, 173, 174,
     176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 196,
     198, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219,
     220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239,
     240, 241, 242, 243, 244, 245, 246, 247,
    ],
    np.int64,
)  # fmt: skip
